// Renders the real chat templates of common model families (as published in their
// tokenizer_config.json / GGUF tokenizer.chat_template) and checks the exact prompt text.
// Also Mistral v0.3 (tools), Phi-3.5 and Phi-4. Llama 3, Gemma 3, Phi-3 and Qwen3 are byte-for-byte
// the templates in ../shared's vocab GGUFs.
#include "core/text/chat_template.h"

#include <gtest/gtest.h>

namespace alap {
namespace {

const char* const kLlama3 = R"tpl({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }})tpl";

const char* const kGemma3 = R"tpl({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '

' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '

' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '
' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>
' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model
'}}
{%- endif -%}
)tpl";

const char* const kPhi3 = R"tpl({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '
' + message['content'] + '<|end|>' + '
' + '<|assistant|>' + '
'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '
'}}{% endif %}{% endfor %})tpl";

const char* const kQwen3 = R"tpl({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set content = message.content %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is defined and message.reasoning_content is not none %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in message.content %}
                {%- set content = message.content.split('</think>')[-1].lstrip('\n') %}
                {%- set reasoning_content = message.content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %})tpl";

const char* const kLlama32 = R"tpl({{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- if strftime_now is defined %}
        {%- set date_string = strftime_now("%d %b %Y") %}
    {%- else %}
        {%- set date_string = "26 Jul 2024" %}
    {%- endif %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
)tpl";

const char* const kQwen25 = R"tpl({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)tpl";

const char* const kMistral = R"tpl({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})tpl";

const char* const kLlama2 = R"tpl({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})tpl";

const char* const kGemma2 = R"tpl({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})tpl";

const char* const kZephyr = R"tpl({% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>
'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %})tpl";

const char* const kSmolLM2 = R"tpl({% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %})tpl";

const char* const kDeepSeekR1 = R"tpl({% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = message['content'] %}{%- endif %}{%- endfor %}{{bos_token}}{{ns.system_prompt}}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is none %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls']%}{%- if not ns.is_first %}{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{%- set ns.is_first = true -%}{%- else %}{{'\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- endfor %}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is not none %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'\n<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\n'}}{% endif %})tpl";

// Mistral-7B-Instruct-v0.3 (tokenizer_config.json, the tool-calling revision): the system message
// is prepended to the LAST user message, tools go in [AVAILABLE_TOOLS] before it.
const char* const kMistralV03 = R"tpl({%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
)tpl";

// Phi-3.5-mini-instruct: keeps the system message (when non-empty), ends with eos_token when no
// generation prompt is asked for.
const char* const kPhi35 = R"tpl({% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'user' %}{{'<|user|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>
' + message['content'] + '<|end|>
'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>
' }}{% else %}{{ eos_token }}{% endif %})tpl";

// Phi-4 (microsoft/phi-4 tokenizer_config.json): ChatML with <|im_sep|>, the assistant header
// written after every user turn.
const char* const kPhi4 = R"tpl({% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %})tpl";

// Phi-4 as re-published with add_generation_prompt (e.g. in GGUF conversions).
const char* const kPhi4GenPrompt = R"tpl({% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'assistant') %}{{'<|im_start|>assistant<|im_sep|>' + message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant<|im_sep|>' }}{% endif %})tpl";

// system + user + assistant + user, asking for the assistant's turn.
ChatTemplateInputs conversation(bool with_system = true) {
  ChatTemplateInputs in;
  if (with_system) in.messages.push_back({"system", "You are helpful.", ""});
  in.messages.push_back({"user", "Hi there", ""});
  in.messages.push_back({"assistant", "Hello! How can I help?", ""});
  in.messages.push_back({"user", "Tell me a joke.", ""});
  return in;
}

std::string render(const char* tpl, const ChatTemplateInputs& in) { return ChatTemplate::parse(tpl).render(in); }

std::string render_error(const char* tpl, const ChatTemplateInputs& in) {
  try {
    render(tpl, in);
  } catch (const ChatTemplateError& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplate, Llama3) {
  auto in = conversation();
  in.bos_token = "<|begin_of_text|>";
  EXPECT_EQ(render(kLlama3, in),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello! How can I help?<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nTell me a joke.<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(detect_chat_template_family(kLlama3), "llama3");
}

TEST(ChatTemplate, Llama32WithDateFromStrftimeNow) {
  auto in = conversation();
  in.bos_token = "<|begin_of_text|>";
  in.now = 1741176000;  // 2025-03-05 12:00 UTC: the same date in every time zone within ±11 h
  EXPECT_EQ(render(kLlama32, in),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 05 Mar 2025\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello! How can I help?<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nTell me a joke.<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  in.add_generation_prompt = false;
  in.messages.erase(in.messages.begin());
  in.extra.emplace_back("date_string", jinja::Value("26 Jul 2024"));
  EXPECT_EQ(render(kLlama32, in),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello! How can I help?<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nTell me a joke.<|eot_id|>");
}

TEST(ChatTemplate, Llama32ToolsInFirstUserMessage) {
  ChatTemplateInputs in;
  in.messages = {{"user", "What time is it?", ""}};
  in.extra.emplace_back("date_string", jinja::Value("26 Jul 2024"));
  jinja::Value tool = jinja::Value::make_dict();
  tool.set("name", "get_time");
  tool.set("parameters", jinja::Value::make_dict());
  in.extra.emplace_back("tools", jinja::Value::make_list({tool}));
  EXPECT_EQ(render(kLlama32, in),
            "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\n"
            "Given the following functions, please respond with a JSON for a function call with its proper "
            "arguments that best answers the given prompt.\n\n"
            "Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its "
            "value}.Do not use variables.\n\n"
            "{\n    \"name\": \"get_time\",\n    \"parameters\": {}\n}\n\n"
            "What time is it?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Qwen25AndItsToolsBranch) {
  EXPECT_EQ(render(kQwen25, conversation()),
            "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
            "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n<|im_start|>user\nTell me a joke.<|im_end|>\n"
            "<|im_start|>assistant\n");
  ChatTemplateInputs in;
  in.messages = {{"user", "Time?", ""}};
  jinja::Value fn = jinja::Value::make_dict();
  fn.set("name", "get_time");
  fn.set("parameters", jinja::Value::make_dict());
  jinja::Value tool = jinja::Value::make_dict();
  tool.set("type", "function");
  tool.set("function", fn);
  in.extra.emplace_back("tools", jinja::Value::make_list({tool}));
  EXPECT_EQ(render(kQwen25, in),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\n"
            "You may call one or more functions to assist with the user query.\n\nYou are provided with function "
            "signatures within <tools></tools> XML tags:\n<tools>\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": {}}}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
            "<args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nTime?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(detect_chat_template_family(kQwen25), "chatml");
}

TEST(ChatTemplate, Qwen3ThinkingHandling) {
  auto in = conversation();
  in.messages[2].content = "<think>\nplanning\n</think>\n\nHello! How can I help?";  // history: think dropped
  const std::string base =
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
      "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n<|im_start|>user\nTell me a joke.<|im_end|>\n"
      "<|im_start|>assistant\n";
  EXPECT_EQ(render(kQwen3, in), base);
  in.enable_thinking = true;
  EXPECT_EQ(render(kQwen3, in), base);
  in.enable_thinking = false;
  EXPECT_EQ(render(kQwen3, in), base + "<think>\n\n</think>\n\n");

  // An assistant turn after the last user query keeps its reasoning (from reasoning_content).
  ChatTemplateInputs last;
  last.add_generation_prompt = false;
  last.messages = {{"user", "2+2?", ""}, {"assistant", "4", "\nadd them\n"}};
  EXPECT_EQ(render(kQwen3, last),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n\n4<|im_end|>\n");
  last.messages[1] = {"assistant", "<think>\nadd them</think>\n\n4", ""};  // or from <think> in content
  EXPECT_EQ(render(kQwen3, last),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n\n4<|im_end|>\n");
}

TEST(ChatTemplate, MistralInstruct) {
  auto in = conversation(false);
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  EXPECT_EQ(render(kMistral, in), "<s>[INST] Hi there [/INST]Hello! How can I help?</s>[INST] Tell me a joke. [/INST]");
  EXPECT_EQ(render_error(kMistral, conversation()),
            "chat template failed: jinja: 1:110: template raised an error: Conversation roles must alternate "
            "user/assistant/user/assistant/...");
  EXPECT_EQ(detect_chat_template_family(kMistral), "mistral");
}

TEST(ChatTemplate, Llama2) {
  auto in = conversation();
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  EXPECT_EQ(render(kLlama2, in),
            "<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi there [/INST] Hello! How can I help? </s>"
            "<s>[INST] Tell me a joke. [/INST]");
  EXPECT_EQ(detect_chat_template_family(kLlama2), "llama2");
}

TEST(ChatTemplate, Gemma3FoldsSystemIntoFirstUserTurn) {
  auto in = conversation();
  in.bos_token = "<bos>";
  EXPECT_EQ(render(kGemma3, in),
            "<bos><start_of_turn>user\nYou are helpful.\n\nHi there<end_of_turn>\n"
            "<start_of_turn>model\nHello! How can I help?<end_of_turn>\n"
            "<start_of_turn>user\nTell me a joke.<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(detect_chat_template_family(kGemma3), "gemma");
}

TEST(ChatTemplate, Gemma2RefusesSystemRole) {
  auto in = conversation(false);
  in.bos_token = "<bos>";
  EXPECT_EQ(render(kGemma2, in),
            "<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\nHello! How can I help?"
            "<end_of_turn>\n<start_of_turn>user\nTell me a joke.<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_NE(render_error(kGemma2, conversation()).find("System role not supported"), std::string::npos);
}

TEST(ChatTemplate, Phi3DropsSystemMessage) {
  auto in = conversation();
  in.bos_token = "<s>";
  EXPECT_EQ(render(kPhi3, in),
            "<s><|user|>\nHi there<|end|>\n<|assistant|>\nHello! How can I help?<|end|>\n"
            "<|user|>\nTell me a joke.<|end|>\n<|assistant|>\n");
  EXPECT_EQ(detect_chat_template_family(kPhi3), "phi3");
}

TEST(ChatTemplate, MistralV03SystemGoesToLastUserTurn) {
  auto in = conversation();
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  EXPECT_EQ(render(kMistralV03, in),
            "<s>[INST] Hi there[/INST] Hello! How can I help?</s>[INST] You are helpful.\n\nTell me a joke.[/INST]");
  // Without a system message, and with tools: [AVAILABLE_TOOLS] just before the last user turn.
  in = conversation(false);
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  jinja::Value fn = jinja::Value::make_dict();
  fn.set("name", "get_time");
  fn.set("description", "Current time");
  fn.set("parameters", jinja::Value::make_dict());
  jinja::Value tool = jinja::Value::make_dict();
  tool.set("type", "function");
  tool.set("function", fn);
  in.extra.emplace_back("tools", jinja::Value::make_list({tool}));
  EXPECT_EQ(render(kMistralV03, in),
            "<s>[INST] Hi there[/INST] Hello! How can I help?</s>[AVAILABLE_TOOLS] [{\"type\": \"function\", "
            "\"function\": {\"name\": \"get_time\", \"description\": \"Current time\", \"parameters\": {}}}]"
            "[/AVAILABLE_TOOLS][INST] Tell me a joke.[/INST]");
  // Two user turns in a row break the alternation check.
  ChatTemplateInputs bad;
  bad.messages = {{"user", "a", ""}, {"user", "b", ""}};
  EXPECT_NE(render_error(kMistralV03, bad).find("conversation roles must alternate"), std::string::npos);
}

TEST(ChatTemplate, Phi35KeepsSystemMessage) {
  auto in = conversation();
  in.bos_token = "<s>";
  in.eos_token = "<|endoftext|>";
  EXPECT_EQ(render(kPhi35, in),
            "<|system|>\nYou are helpful.<|end|>\n<|user|>\nHi there<|end|>\n<|assistant|>\nHello! How can I help?"
            "<|end|>\n<|user|>\nTell me a joke.<|end|>\n<|assistant|>\n");
  in.add_generation_prompt = false;
  in.messages[0].content = "";  // an empty system message is left out
  EXPECT_EQ(render(kPhi35, in),
            "<|user|>\nHi there<|end|>\n<|assistant|>\nHello! How can I help?<|end|>\n<|user|>\nTell me a joke."
            "<|end|>\n<|endoftext|>");
}

TEST(ChatTemplate, Phi4ImSep) {
  const std::string expected =
      "<|im_start|>system<|im_sep|>You are helpful.<|im_end|><|im_start|>user<|im_sep|>Hi there<|im_end|>"
      "<|im_start|>assistant<|im_sep|>Hello! How can I help?<|im_end|><|im_start|>user<|im_sep|>Tell me a joke."
      "<|im_end|><|im_start|>assistant<|im_sep|>";
  auto in = conversation();
  in.bos_token = "<|endoftext|>";
  EXPECT_EQ(render(kPhi4, in), expected);
  EXPECT_EQ(render(kPhi4GenPrompt, in), expected);
  in.add_generation_prompt = false;
  const std::string header = "<|im_start|>assistant<|im_sep|>";
  EXPECT_EQ(render(kPhi4GenPrompt, in), expected.substr(0, expected.size() - header.size()));
}

TEST(ChatTemplate, ZephyrTinyLlamaKeepsNewlinesAfterExpressions) {
  auto in = conversation();
  in.eos_token = "</s>";
  EXPECT_EQ(render(kZephyr, in),
            "<|system|>\nYou are helpful.</s>\n<|user|>\nHi there</s>\n<|assistant|>\nHello! How can I help?</s>\n"
            "<|user|>\nTell me a joke.</s>\n<|assistant|>\n");
  EXPECT_EQ(detect_chat_template_family(kZephyr), "zephyr");
}

TEST(ChatTemplate, SmolLM2ChatML) {
  EXPECT_EQ(render(kSmolLM2, conversation(false)),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\nHello! How can I help?<|im_end|>\n"
            "<|im_start|>user\nTell me a joke.<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, DeepSeekR1DistillQwen) {
  auto in = conversation();
  in.bos_token = "<｜begin▁of▁sentence｜>";
  in.messages[2].content = "<think>\nhmm\n</think>\n\nHello! How can I help?";
  EXPECT_EQ(render(kDeepSeekR1, in),
            "<｜begin▁of▁sentence｜>You are helpful.<｜User｜>Hi there<｜Assistant｜>\n\nHello! How can I help?"
            "<｜end▁of▁sentence｜><｜User｜>Tell me a joke.<｜Assistant｜><think>\n");
  EXPECT_EQ(detect_chat_template_family(kDeepSeekR1), "deepseek");
}

TEST(ChatTemplate, BuiltinChatMLFallback) {
  EXPECT_EQ(render(builtin_chatml_template().c_str(), conversation()),
            "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
            "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n<|im_start|>user\nTell me a joke.<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(detect_chat_template_family(builtin_chatml_template()), "chatml");
  EXPECT_EQ(detect_chat_template_family("{{ messages }}"), "unknown");
}

TEST(ChatTemplate, ParseErrorIsAChatTemplateError) {
  try {
    ChatTemplate::parse("{% for m in messages %}");
    FAIL() << "no error";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "chat template does not parse: jinja: 1:4: '{% for %}' is never closed (missing '{% endfor %}')");
  }
}

}  // namespace
}  // namespace alap
