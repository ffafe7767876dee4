"""An OpenAI-compatible chat-completions server on loopback for tests of model-written text.

It checks each request as the documentation of the endpoint it stands for does, and answers 400
with an OpenAI error object when a real endpoint would refuse it:
- OpenAI (https://platform.openai.com/docs/api-reference/chat/create): only `POST /v1/chat/completions`;
  `model` and a non-empty `messages` list of {role, content} with text and image_url parts; unknown
  fields refused ("Unrecognized request argument supplied"); temperature 0-2, top_p 0-1, whole max
  tokens, seed, stop (a text or up to 4). Reasoning models (o1, o3, o4-mini, gpt-5...) take
  `max_completion_tokens`, not `max_tokens`, and no temperature or top_p but the default 1;
  `reasoning_effort` is theirs only.
- vLLM (docs.vllm.ai, OpenAI-compatible server, "Extra parameters"): the OpenAI fields plus its
  sampling and chat-template extras (top_k, min_p, repetition_penalty, chat_template_kwargs, ...).
- Anthropic's OpenAI SDK compatibility: `thinking: {type, budget_tokens}` beside the OpenAI fields.
- Gemini's OpenAI compatibility: `extra_body: {google: {thinking_config: {thinking_budget}}}` and
  `reasoning_effort`.
"""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENAI_FIELDS = {
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
}
VLLM_EXTRAS = {
    "best_of", "use_beam_search", "top_k", "min_p", "repetition_penalty", "length_penalty", "stop_token_ids",
    "include_stop_str_in_output", "ignore_eos", "min_tokens", "skip_special_tokens",
    "spaces_between_special_tokens", "truncate_prompt_tokens", "prompt_logprobs", "allowed_token_ids",
    "bad_words", "echo", "add_generation_prompt", "continue_final_message", "add_special_tokens", "documents",
    "chat_template", "chat_template_kwargs", "mm_processor_kwargs", "guided_json", "guided_regex",
    "guided_choice", "guided_grammar", "structural_tag", "guided_decoding_backend", "priority", "request_id",
    "return_tokens_as_token_ids", "cache_salt", "vllm_xargs",
}
FIELDS = {"openai": OPENAI_FIELDS, "vllm": OPENAI_FIELDS | VLLM_EXTRAS, "anthropic": OPENAI_FIELDS | {"thinking"},
          "gemini": OPENAI_FIELDS | {"extra_body"}}
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


class Refused(Exception):
    """What the endpoint answers a request it refuses: a status and an OpenAI error object."""

    def __init__(self, message, param=None, status=400, kind="invalid_request_error", code=None):
        super().__init__(message)
        self.param, self.status, self.kind, self.code = param, status, kind, code

    def error_object(self) -> dict:
        return {"error": {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}}


def _number(body, name, low, high):
    value = body.get(name)
    if name in body and (type(value) not in (int, float) or not low <= value <= high):
        raise Refused(f"Invalid '{name}': expected a number from {low} to {high}, got {value!r}.", name)


def check_request(body, flavour: str = "openai") -> None:
    """Raise Refused where the endpoint `flavour` documents that it refuses the body."""
    if not isinstance(body, dict):
        raise Refused("The body must be a JSON object.")
    unknown = sorted(set(body) - FIELDS[flavour])
    if unknown:
        raise Refused(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Refused("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Refused("'messages' must be a non-empty array.", "messages")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise Refused("Each message needs a role among system, developer, user, assistant, tool.", "messages")
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                ok = isinstance(part, dict) and (
                    (part.get("type") == "text" and isinstance(part.get("text"), str))
                    or (part.get("type") == "image_url" and isinstance(part.get("image_url"), dict)
                        and isinstance(part["image_url"].get("url"), str)))
                if not ok:
                    raise Refused("A content part is {type: text, text} or {type: image_url, image_url: {url}}.",
                                  "messages")
        elif not isinstance(content, str):
            raise Refused("A message's content is a text or a list of parts.", "messages")
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    for name in ("max_tokens", "max_completion_tokens", "n", "seed"):
        if name in body and (type(body[name]) is not int or (name != "seed" and body[name] < 1)):
            raise Refused(f"Invalid '{name}': expected an integer.", name)
    stop = body.get("stop")
    if "stop" in body and not (isinstance(stop, str) or (
            isinstance(stop, list) and len(stop) <= 4 and all(isinstance(s, str) for s in stop))):
        raise Refused("Invalid 'stop': a string or an array of up to 4 strings.", "stop")
    reasoning = flavour == "openai" and bool(REASONING_MODEL.match(body["model"]))
    if reasoning:
        if "max_tokens" in body:
            raise Refused("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                          "'max_completion_tokens' instead.", "max_tokens")
        for name in ("temperature", "top_p"):
            if name in body and body[name] != 1:
                raise Refused(f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                              "Only the default (1) value is supported.", name)
    if "reasoning_effort" in body:
        efforts = ("none", "low", "medium", "high") if flavour == "gemini" else ("minimal", "low", "medium", "high")
        if body["reasoning_effort"] not in efforts or (flavour == "openai" and not reasoning):
            raise Refused(f"Unsupported value: 'reasoning_effort' {body['reasoning_effort']!r} for this model.",
                          "reasoning_effort")
    if "chat_template_kwargs" in body and not isinstance(body["chat_template_kwargs"], dict):
        raise Refused("chat_template_kwargs is an object.", "chat_template_kwargs")
    thinking = body.get("thinking")
    if "thinking" in body and not (isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled")
                                   and (thinking["type"] == "disabled"
                                        or type(thinking.get("budget_tokens")) is int)):
        raise Refused("thinking is {type: enabled, budget_tokens} or {type: disabled}.", "thinking")
    if "extra_body" in body:
        config = (body["extra_body"] or {}).get("google", {}).get("thinking_config") if isinstance(
            body["extra_body"], dict) else None
        if not isinstance(config, dict) or set(config) - {"thinking_budget", "include_thoughts", "thinking_level"}:
            raise Refused("extra_body is {google: {thinking_config: {thinking_budget}}}.", "extra_body")
        if "reasoning_effort" in body:
            raise Refused("reasoning_effort and thinking_budget cannot be used together.", "extra_body")


def request_body(raw: bytes):
    """The JSON a request carries, None when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def checked_request(method: str, path: str, content_type: str | None, raw: bytes, auth: str | None,
                    flavour: str = "openai", api_key: str | None = None, served_model: str | None = None) -> dict:
    """The JSON body of a chat-completions request, or Refused as the endpoint answers it, in its
    order: an unknown URL (404), a body that is not JSON (400), a missing or wrong key when `api_key`
    is set (401, OpenAI's invalid_api_key), a body the endpoint `flavour` refuses (400, check_request),
    a model it does not serve when `served_model` is set (404, model_not_found; vLLM's NotFoundError)."""
    if method != "POST" or path != "/v1/chat/completions":
        raise Refused(f"Unknown request URL: {method} {path}.", status=404, code="unknown_url")
    body = request_body(raw)
    if not (content_type or "").startswith("application/json") or body is None:
        raise Refused("We could not parse the JSON body of your request.")
    if api_key is not None and auth != f"Bearer {api_key}":
        given = (auth or "").removeprefix("Bearer ")
        raise Refused(f"Incorrect API key provided: {given[:3]}***{given[-2:]}." if given else
                      "You didn't provide an API key.", status=401, code="invalid_api_key")
    check_request(body, flavour)
    if served_model is not None and body["model"] != served_model:
        raise Refused(f"The model `{body['model']}` does not exist or you do not have access to it.",
                      "model", status=404, code="model_not_found")
    return body


def user_text(body) -> str:
    """The text part of a chat request's last user message."""
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else next(part["text"] for part in content if part["type"] == "text")


class ChatServer:
    """Answers each chat completion with the next scripted content, then with `reply` once the script
    is spent (a text, or a function of the request's body for a run whose requests arrive in any order),
    and keeps every request (path, body, Authorization header, `at`: when it came, time.monotonic()).
    A request the endpoint `flavour` (openai, vllm, anthropic, gemini) would refuse is answered 400 and
    kept in `refused`; with `api_key` a request without that key is a 401, with `served_model` one
    naming another model a 404 (checked_request).
    Modes, for requests it accepts: `script` answers the first ones with (status, headers) or (status,
    headers, message) as an OpenAI error object; `rate_limit_first` answers the first request 429;
    `slow` answers after 1.5 s, past a short client timeout; `fail_with` answers every request with
    that status (400, 500, 503...), or only those `fail_if(body)` holds true for, with `fail_message`;
    `malformed` answers 200 with a body that is not a chat completion."""

    def __init__(self, contents=(), reply=None, flavour="openai", api_key=None, served_model=None, script=()):
        self.contents, self.reply, self.requests, self.refused = list(contents), reply, [], []
        self.flavour, self.api_key, self.served_model = flavour, api_key, served_model
        self.rate_limit_first = self.slow = self.malformed = False
        self.fail_with = self.fail_if = None
        self.fail_message = "scripted failure"
        self.script = list(script)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self, status, data, headers=()):
                data = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                for name, value in (("Content-Type", "application/json"), *headers):
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def refuse(self, refused: Refused):
                server.refused.append(str(refused))
                self.answer(refused.status, refused.error_object())

            def do_GET(self):
                self.refuse(Refused(f"Unknown request URL: GET {self.path}.", status=404, code="unknown_url"))

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization")
                server.requests.append({"path": self.path, "body": request_body(raw), "auth": auth,
                                        "at": time.monotonic()})
                try:
                    body = checked_request("POST", self.path, self.headers.get("Content-Type"), raw, auth,
                                           server.flavour, server.api_key, server.served_model)
                except Refused as refused:
                    return self.refuse(refused)
                if server.script:
                    status, headers, *message = server.script.pop(0)
                    error = {"message": message[0] if message else "scripted failure", "type": "server_error"}
                    return self.answer(status, {"error": error}, tuple(headers.items()))
                if server.rate_limit_first and len(server.requests) == 1:
                    return self.answer(429, {"error": {"message": "Rate limit reached", "type": "requests"}},
                                       [("Retry-After", "0")])
                if server.fail_with and (server.fail_if is None or server.fail_if(body)):
                    return self.answer(server.fail_with, {"error": {"message": server.fail_message,
                                                                    "type": "server"}})
                if server.slow:
                    time.sleep(1.5)
                if server.malformed:
                    return self.answer(200, b'{"id": "chatcmpl-1", "object": "chat.completion", "choi')
                content = (server.contents.pop(0) if server.contents
                           else server.reply(body) if callable(server.reply) else server.reply)
                self.answer(200, {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                                  "model": body["model"], "choices": [
                                      {"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": content}}]})

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll so that close() returns in milliseconds instead of the default half second.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def prompts(self) -> list[str]:
        """The text of each request's user turn (after any system message, beside any pictures), in the
        order they came."""
        return [user_text(request["body"]) for request in self.requests]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
