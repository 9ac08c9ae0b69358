// The OpenAI chat-completions wire format declared in openai_api.h, on alap::json (core/store).
// Not the HTTP plumbing, queueing or engine calls (http_server.cpp).
#include "app/server/openai_api.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/store/json.h"

namespace alap::server {
namespace {

using json::Value;

[[noreturn]] void bad(const std::string& param, const std::string& message) {
  throw ApiError(400, message, param, "invalid_value");
}

const char* type_word(const Value& v) { return json::type_name(v.type()); }

// Present and not null; otherwise nullptr.
const Value* get(const Value& object, std::string_view key) {
  const Value* v = object.find(key);
  return (v && !v->is_null()) ? v : nullptr;
}

double number_in(const Value& v, const std::string& param, double lo, double hi) {
  if (!v.is_number()) bad(param, "'" + param + "' must be a number, not " + type_word(v));
  const double d = v.as_double();
  if (!std::isfinite(d) || d < lo || d > hi) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "'%s' must be between %g and %g (got %g)", param.c_str(), lo, hi, d);
    bad(param, buf);
  }
  return d;
}

int64_t integer_at_least(const Value& v, const std::string& param, int64_t lo) {
  if (!v.is_int()) {
    // 3.0 is an integer to JavaScript clients; accept a number with no fraction.
    if (v.is_number() && std::isfinite(v.as_double()) && std::floor(v.as_double()) == v.as_double() &&
        std::fabs(v.as_double()) < 9.0e15) {
      const int64_t i = static_cast<int64_t>(v.as_double());
      if (i < lo) bad(param, "'" + param + "' must be at least " + std::to_string(lo) + " (got " + std::to_string(i) + ")");
      return i;
    }
    bad(param, "'" + param + "' must be an integer, not " + type_word(v));
  }
  const int64_t i = v.as_int();
  if (i < lo) bad(param, "'" + param + "' must be at least " + std::to_string(lo) + " (got " + std::to_string(i) + ")");
  return i;
}

bool boolean(const Value& v, const std::string& param) {
  if (!v.is_bool()) bad(param, "'" + param + "' must be a boolean, not " + type_word(v));
  return v.as_bool();
}

std::string message_content(const Value& content, const std::string& param) {
  if (content.is_null()) return {};
  if (content.is_string()) return content.as_string();
  if (!content.is_array()) bad(param, "'" + param + "' must be a string or an array of text parts, not " + type_word(content));
  std::string text;
  const json::Array& parts = content.as_array();
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    if (!parts[i].is_object()) bad(p, "'" + p + "' must be an object, not " + type_word(parts[i]));
    const Value* type = parts[i].find("type");
    if (!type || !type->is_string()) bad(p + ".type", "'" + p + ".type' must be a string");
    if (type->as_string() != "text") {
      bad(p + ".type", "'" + p + ".type' is '" + type->as_string() + "'; only text content parts are supported");
    }
    const Value* t = parts[i].find("text");
    if (!t || !t->is_string()) bad(p + ".text", "'" + p + ".text' must be a string");
    if (i > 0) text += '\n';
    text += t->as_string();
  }
  return text;
}

std::vector<ChatMessage> parse_messages(const Value* messages) {
  if (!messages) bad("messages", "'messages' is required");
  if (!messages->is_array()) bad("messages", std::string("'messages' must be an array, not ") + type_word(*messages));
  const json::Array& arr = messages->as_array();
  if (arr.empty()) bad("messages", "'messages' must hold at least one message");
  std::vector<ChatMessage> out;
  out.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const std::string p = "messages[" + std::to_string(i) + "]";
    if (!arr[i].is_object()) bad(p, "'" + p + "' must be an object, not " + type_word(arr[i]));
    const Value* role = arr[i].find("role");
    if (!role) bad(p + ".role", "'" + p + ".role' is required");
    if (!role->is_string()) bad(p + ".role", "'" + p + ".role' must be a string, not " + type_word(*role));
    std::string r = role->as_string();
    if (r == "developer") r = "system";
    if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
      bad(p + ".role", "'" + p + ".role' is '" + role->as_string() +
                           "'; expected system, developer, user, assistant or tool");
    }
    const Value* content = arr[i].find("content");
    if (!content && r != "assistant") bad(p + ".content", "'" + p + ".content' is required");
    ChatMessage m;
    m.role = std::move(r);
    if (content) m.content = message_content(*content, p + ".content");
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> parse_stop(const Value& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    if (!v.as_string().empty()) out.push_back(v.as_string());
    return out;
  }
  if (!v.is_array()) bad("stop", std::string("'stop' must be a string or an array of strings, not ") + type_word(v));
  const json::Array& arr = v.as_array();
  if (arr.size() > 16) bad("stop", "'stop' holds " + std::to_string(arr.size()) + " strings; at most 16 are allowed");
  for (size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) {
      bad("stop", "'stop[" + std::to_string(i) + "]' must be a string, not " + type_word(arr[i]));
    }
    if (!arr[i].as_string().empty()) out.push_back(arr[i].as_string());
  }
  return out;
}

Value usage_value(const GenerateStats& stats) {
  Value u;
  u.set("prompt_tokens", static_cast<int64_t>(stats.n_prompt_tokens));
  u.set("completion_tokens", static_cast<int64_t>(stats.n_generated));
  u.set("total_tokens", static_cast<int64_t>(stats.n_prompt_tokens + stats.n_generated));
  return u;
}

Value chunk_base(const CompletionMeta& meta) {
  Value c;
  c.set("id", meta.id);
  c.set("object", "chat.completion.chunk");
  c.set("created", meta.created);
  c.set("model", meta.model);
  return c;
}

std::string chunk_with_choice(const CompletionMeta& meta, Value delta, Value finish, bool include_usage) {
  Value choice;
  choice.set("index", 0);
  choice.set("delta", std::move(delta));
  choice.set("logprobs", nullptr);
  choice.set("finish_reason", std::move(finish));
  Value c = chunk_base(meta);
  c.set("choices", json::Array{std::move(choice)});
  if (include_usage) c.set("usage", nullptr);
  return json::write(c);
}

}  // namespace

const char* error_type(int status) {
  switch (status) {
    case 400:
    case 404:
    case 405:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 503:
      return "service_unavailable_error";
    default:
      return "server_error";
  }
}

std::string error_json(int status, std::string_view message, std::string_view param, std::string_view code) {
  Value e;
  e.set("message", sanitize_utf8(message));
  e.set("type", error_type(status));
  e.set("param", param.empty() ? Value() : Value(sanitize_utf8(param)));
  e.set("code", code.empty() ? Value() : Value(sanitize_utf8(code)));
  Value root;
  root.set("error", std::move(e));
  return json::write(root);
}

std::string error_json(const ApiError& e) { return error_json(e.status(), e.what(), e.param(), e.code()); }

ChatCompletionRequest parse_chat_request(std::string_view body, uint64_t default_seed) {
  Value root;
  try {
    root = json::parse(body);
  } catch (const json::ParseError& e) {
    throw ApiError(400, std::string("the body is not valid JSON: ") + e.what(), {}, "invalid_json");
  }
  if (!root.is_object()) {
    throw ApiError(400, std::string("the body must be a JSON object, not ") + type_word(root), {}, "invalid_json");
  }

  ChatCompletionRequest r;
  GenerateRequest& g = r.generate;
  g.sampling.seed = default_seed;
  g.max_tokens = 0;  // OpenAI's default: until the model stops or the context is full

  if (const Value* v = get(root, "model")) {
    if (!v->is_string()) bad("model", std::string("'model' must be a string, not ") + type_word(*v));
    r.model = v->as_string();
  }
  g.messages = parse_messages(get(root, "messages"));

  if (const Value* v = get(root, "n")) {
    if (integer_at_least(*v, "n", 1) != 1) bad("n", "'n' must be 1: one choice per request is supported");
  }
  if (const Value* v = get(root, "stream")) r.stream = boolean(*v, "stream");
  if (const Value* v = get(root, "stream_options")) {
    if (!v->is_object()) bad("stream_options", std::string("'stream_options' must be an object, not ") + type_word(*v));
    if (const Value* u = get(*v, "include_usage")) r.include_usage = boolean(*u, "stream_options.include_usage");
  }
  if (const Value* v = get(root, "temperature")) g.sampling.temperature = static_cast<float>(number_in(*v, "temperature", 0.0, 2.0));
  if (const Value* v = get(root, "top_p")) g.sampling.top_p = static_cast<float>(number_in(*v, "top_p", 0.0, 1.0));
  if (const Value* v = get(root, "top_k")) {
    const int64_t k = integer_at_least(*v, "top_k", 0);
    g.sampling.top_k = static_cast<int32_t>(std::min<int64_t>(k, INT32_MAX));
  }
  if (const Value* v = get(root, "min_p")) g.sampling.min_p = static_cast<float>(number_in(*v, "min_p", 0.0, 1.0));
  if (const Value* v = get(root, "repeat_penalty")) {
    const double p = number_in(*v, "repeat_penalty", 0.0, 100.0);
    if (p <= 0.0) bad("repeat_penalty", "'repeat_penalty' must be greater than 0");
    g.sampling.repeat_penalty = static_cast<float>(p);
  }
  if (const Value* v = get(root, "presence_penalty")) {
    g.sampling.presence_penalty = static_cast<float>(number_in(*v, "presence_penalty", -2.0, 2.0));
  }
  if (const Value* v = get(root, "frequency_penalty")) {
    g.sampling.frequency_penalty = static_cast<float>(number_in(*v, "frequency_penalty", -2.0, 2.0));
  }
  if (const Value* v = get(root, "seed")) {
    if (!v->is_int()) bad("seed", std::string("'seed' must be an integer, not ") + type_word(*v));
    g.sampling.seed = static_cast<uint64_t>(v->as_int());
  }
  // max_completion_tokens is the newer name; when both are given it wins.
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (const Value* v = get(root, key)) {
      const int64_t n = integer_at_least(*v, key, 1);
      g.max_tokens = static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX));
    }
  }
  if (const Value* v = get(root, "stop")) g.stop = parse_stop(*v);
  if (const Value* v = get(root, "logprobs")) {
    if (boolean(*v, "logprobs")) throw ApiError(400, "'logprobs' is not supported by this server", "logprobs", "unsupported");
  }
  return r;
}

std::string completion_id(std::mt19937_64& rng) {
  static const char kHex[] = "0123456789abcdef";
  std::string id = "chatcmpl-";
  for (int half = 0; half < 2; ++half) {
    uint64_t bits = rng();
    for (int i = 0; i < 12; ++i, bits >>= 4) id += kHex[bits & 0xF];
  }
  return id;
}

std::string model_id_from_path(const std::filesystem::path& path) { return path.stem().string(); }

const char* finish_reason(StopReason reason) {
  switch (reason) {
    case StopReason::max_tokens:
    case StopReason::context_full:
      return "length";
    case StopReason::eog:
    case StopReason::stop_string:
    case StopReason::cancelled:
      break;
  }
  return "stop";
}

std::string completion_json(const CompletionMeta& meta, const GenerateResult& result) {
  Value message;
  message.set("role", "assistant");
  message.set("content", sanitize_utf8(result.text));
  Value choice;
  choice.set("index", 0);
  choice.set("message", std::move(message));
  choice.set("logprobs", nullptr);
  choice.set("finish_reason", finish_reason(result.stats.stop_reason));
  Value c;
  c.set("id", meta.id);
  c.set("object", "chat.completion");
  c.set("created", meta.created);
  c.set("model", meta.model);
  c.set("choices", json::Array{std::move(choice)});
  c.set("usage", usage_value(result.stats));
  return json::write(c);
}

std::string chunk_role_json(const CompletionMeta& meta, bool include_usage) {
  Value delta;
  delta.set("role", "assistant");
  delta.set("content", "");
  return chunk_with_choice(meta, std::move(delta), Value(), include_usage);
}

std::string chunk_content_json(const CompletionMeta& meta, std::string_view text, bool include_usage) {
  Value delta;
  delta.set("content", sanitize_utf8(text));
  return chunk_with_choice(meta, std::move(delta), Value(), include_usage);
}

std::string chunk_finish_json(const CompletionMeta& meta, StopReason reason, bool include_usage) {
  return chunk_with_choice(meta, Value(json::Object{}), Value(finish_reason(reason)), include_usage);
}

std::string usage_chunk_json(const CompletionMeta& meta, const GenerateStats& stats) {
  Value c = chunk_base(meta);
  c.set("choices", json::Array{});
  c.set("usage", usage_value(stats));
  return json::write(c);
}

std::string model_json(std::string_view id, int64_t created) {
  Value m;
  m.set("id", sanitize_utf8(id));
  m.set("object", "model");
  m.set("created", created);
  m.set("owned_by", "alap");
  return json::write(m);
}

std::string models_json(std::string_view id, int64_t created) {
  Value list;
  list.set("object", "list");
  list.set("data", json::Array{json::parse(model_json(id, created))});
  return json::write(list);
}

std::string sse_event(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 8);
  size_t start = 0;
  for (;;) {
    const size_t nl = data.find('\n', start);
    std::string_view line = data.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += "data: ";
    out += line;
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out += '\n';
  return out;
}

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string sse_comment(std::string_view text) { return ": " + std::string(text) + "\n\n"; }

std::string sanitize_utf8(std::string_view s) {
  if (json::is_valid_utf8(s)) return std::string(s);
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if (b0 < 0x80) len = 1;
    else if (b0 >= 0xC2 && b0 <= 0xDF) len = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3;
    else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4;
    // Let the strict checker judge the candidate sequence (overlongs, surrogates, > U+10FFFF).
    if (len > 0 && i + len <= s.size() && json::is_valid_utf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

bool bearer_matches(std::string_view authorization, std::string_view key) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.size() != kPrefix.size() + key.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < kPrefix.size(); ++i) {  // the scheme is case-insensitive (RFC 7235)
    diff |= static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(authorization[i])) ^
                                       std::tolower(static_cast<unsigned char>(kPrefix[i])));
  }
  for (size_t i = 0; i < key.size(); ++i) {
    diff |= static_cast<unsigned char>(authorization[kPrefix.size() + i] ^ key[i]);
  }
  return diff == 0;
}

}  // namespace alap::server
