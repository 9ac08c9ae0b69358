// The OpenAI chat-completions wire format for `alap-cli serve`: the request parser/validator, the
// response and chunk builders, server-sent-event framing and the error body. Pure functions on
// strings; no sockets, no threads, no engine calls (http_server.h does those).
//
//   ChatCompletionRequest r = parse_chat_request(body, /*default_seed=*/42);   // throws ApiError(400)
//   CompletionMeta meta{completion_id(rng), std::time(nullptr), "tiny"};
//   res.body = completion_json(meta, engine.generate(r.generate, {}, cancel));
//   sink(sse_event(chunk_content_json(meta, "Hel", r.include_usage)));  ...  sink(sse_done());
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/engine/engine.h"

namespace alap::server {

// A failure answered with `status` and OpenAI's error body. param names the offending request
// field ("messages[1].role"), code is a machine-readable word ("invalid_api_key"); both optional.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = {}, std::string code = {})
      : std::runtime_error(message), status_(status), param_(std::move(param)), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string param_;
  std::string code_;
};

// OpenAI's error "type" for an HTTP status: 400/404/405/413 invalid_request_error,
// 401 authentication_error, 503 service_unavailable_error, anything else server_error.
const char* error_type(int status);
// {"error":{"message":...,"type":...,"param":...|null,"code":...|null}}
std::string error_json(int status, std::string_view message, std::string_view param = {}, std::string_view code = {});
std::string error_json(const ApiError& e);

// A validated /v1/chat/completions request, already mapped onto the engine's request.
struct ChatCompletionRequest {
  std::string model;          // as the client named it (may be empty); answers name the loaded model
  GenerateRequest generate;   // messages, sampling, max_tokens (0: until EOG or a full context), stop
  bool stream = false;
  bool include_usage = false; // stream_options.include_usage: a last chunk with usage, others "usage":null
};

// Parses and validates a chat-completions body. Field mapping (absent or null = default):
//   messages (required, non-empty): role system|developer(→system)|user|assistant|tool, content a
//     string, null, or an array of {"type":"text","text":...} parts (joined with "\n")
//   temperature [0,2], top_p [0,1], seed (int64), max_completion_tokens / max_tokens (>= 1; the
//     former wins), stop (string or array of up to 16 strings; empty strings ignored), n (must be 1),
//     stream (bool), stream_options.include_usage (bool)
//   extensions as in llama.cpp's server: top_k (>= 0), min_p [0,1], repeat_penalty (> 0)
//   presence_penalty / frequency_penalty [-2,2]: OpenAI's additive penalties over the recent
//     tokens (SamplerParams); logprobs true → 400 (unsupported)
//   unknown fields (user, tools, response_format, logit_bias, ...) are ignored.
// Sampler defaults are the engine's (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05), not
// OpenAI's temperature 1 without top-k/min-p; default_seed is used when the body has no seed.
// Throws ApiError(400) naming the field on invalid JSON, a wrong type or a value out of range.
ChatCompletionRequest parse_chat_request(std::string_view body, uint64_t default_seed);

// What every response and chunk of one completion shares.
struct CompletionMeta {
  std::string id;        // "chatcmpl-" + 24 hex digits
  int64_t created = 0;   // Unix seconds
  std::string model;     // the loaded model's id
};

std::string completion_id(std::mt19937_64& rng);
// The model id clients see: the file name without its extension ("qwen2.5-0.5b-q8_0").
std::string model_id_from_path(const std::filesystem::path& path);

// eog and stop_string → "stop"; max_tokens and context_full → "length"; cancelled → "stop".
const char* finish_reason(StopReason reason);

// Non-streaming answer: object "chat.completion", one choice, usage from the stats.
std::string completion_json(const CompletionMeta& meta, const GenerateResult& result);

// Streaming chunks (object "chat.completion.chunk"). With include_usage every chunk carries
// "usage":null and usage_chunk_json (choices []) comes after the finish chunk, as OpenAI does.
std::string chunk_role_json(const CompletionMeta& meta, bool include_usage);            // delta {role, content ""}
std::string chunk_content_json(const CompletionMeta& meta, std::string_view text, bool include_usage);
std::string chunk_finish_json(const CompletionMeta& meta, StopReason reason, bool include_usage);  // delta {}
std::string usage_chunk_json(const CompletionMeta& meta, const GenerateStats& stats);

// GET /v1/models and /v1/models/{id}.
std::string model_json(std::string_view id, int64_t created);
std::string models_json(std::string_view id, int64_t created);

// Server-sent events: every line of data gets "data: ", the event ends with a blank line.
std::string sse_event(std::string_view data);
std::string sse_done();                          // "data: [DONE]\n\n"
std::string sse_comment(std::string_view text);  // ": text\n\n" (ignored by clients; a keep-alive)

// Invalid UTF-8 sequences replaced by U+FFFD, so any engine text can go into JSON.
std::string sanitize_utf8(std::string_view text);

// True when `authorization` is "Bearer <key>" (scheme in any case; the key compared in constant time).
bool bearer_matches(std::string_view authorization, std::string_view key);

}  // namespace alap::server
