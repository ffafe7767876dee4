"""An OpenAI-compatible chat-completions endpoint on loopback that answers after a fixed latency, as a
vLLM server or a hosted API does, and counts the requests it holds open at once (`peak`).

HTTP/1.1 with keep-alive on asyncio, so hundreds of open requests cost nothing; it runs in a thread of
the test (`LatencyEndpoint(...)`) or as its own process for a bench (`python tests/latency_endpoint.py
PORT LATENCY_S`, where GET /stats reports the counts). Each request is checked as tests/chat_server.py's
strict server checks it (checked_request: the URL, the JSON, the key when `api_key` is set, the shape
of the messages and their content parts, the fields the endpoint `flavour` takes, the model when
`served_model` is set), and one it would refuse is answered at once with its status and an OpenAI
error object, and kept in `refused`. `script` answers the first accepted requests with given statuses
and headers (a 429 with Retry-After, a redirect), and a message as an OpenAI error object where a
third element gives one, before the normal answers; `reply(body)` is the content of a normal answer
(default: the last word of the prompt)."""

import asyncio
import json
import sys
import threading

try:
    from tests.chat_server import Refused, checked_request, request_body
except ModuleNotFoundError:  # run as a script (a bench's endpoint): tests/ itself is on the path
    from chat_server import Refused, checked_request, request_body


def last_word(body: dict) -> str:
    return body["messages"][0]["content"][0]["text"].split()[-1]


class LatencyEndpoint:
    def __init__(self, latency_s: float = 0.0, reply=last_word, script=(), port: int = 0, flavour: str = "openai",
                 api_key: str | None = None, served_model: str | None = None):
        self.latency_s, self.reply, self.script = latency_s, reply, list(script)
        self.flavour, self.api_key, self.served_model = flavour, api_key, served_model
        self.requests, self.refused, self.in_flight, self.peak = [], [], 0, 0
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(port, started), daemon=True)
        self.thread.start()
        started.wait(10)
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def _serve(self, port: int, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", port,
                                                                        backlog=1024))
        self.port = self.server.sockets[0].getsockname()[1]
        started.set()
        self.loop.run_forever()

    async def _connection(self, reader, writer) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                method, path, _ = head[0].split(" ", 2)
                headers = dict(line.split(":", 1) for line in head[1:] if ":" in line)
                headers = {name.strip().lower(): value.strip() for name, value in headers.items()}
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                status, extra, data = await self._answer(method, path, headers, body)
                lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(data)}", "Content-Type: application/json",
                         *(f"{name}: {value}" for name, value in extra.items())]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _answer(self, method: str, path: str, headers: dict, raw: bytes) -> tuple[int, dict, bytes]:
        if method == "GET" and path == "/stats":
            return 200, {}, json.dumps({"peak": self.peak, "requests": len(self.requests)}).encode()
        auth = headers.get("authorization")
        self.requests.append({"path": path, "body": request_body(raw), "auth": auth})
        try:
            body = checked_request(method, path, headers.get("content-type"), raw, auth, self.flavour, self.api_key,
                                   self.served_model)
        except Refused as refused:
            self.refused.append(str(refused))
            return refused.status, {}, json.dumps(refused.error_object()).encode()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        if self.script:
            status, extra, *message = self.script.pop(0)
            error = {"error": {"message": message[0], "type": "server_error"}} if message else {}
            return status, extra, json.dumps(error).encode()
        content = self.reply(body)
        return 200, {}, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()

    def close(self) -> None:
        async def stop():
            self.server.close()
            open_connections = asyncio.all_tasks() - {asyncio.current_task()}
            for task in open_connections:
                task.cancel()
            await asyncio.gather(*open_connections, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


if __name__ == "__main__":
    endpoint = LatencyEndpoint(float(sys.argv[2]), port=int(sys.argv[1]))
    print(endpoint.url, flush=True)
    endpoint.thread.join()
