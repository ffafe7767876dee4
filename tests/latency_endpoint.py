"""An OpenAI-compatible chat-completions endpoint on loopback that answers after a fixed latency, as a
vLLM server or a hosted API does, and counts the requests it holds open at once (`peak`).

HTTP/1.1 with keep-alive on asyncio, so hundreds of open requests cost nothing; it runs in a thread of
the test (`LatencyEndpoint(...)`) or as its own process for a bench (`python tests/latency_endpoint.py
PORT LATENCY_S`, where GET /stats reports the counts). `script` answers the first requests with given
statuses and headers (a 429 with Retry-After, a redirect) before the normal answers; `reply(body)` is
the content of a normal answer (default: the last word of the prompt)."""

import asyncio
import json
import sys
import threading


def last_word(body: dict) -> str:
    return body["messages"][0]["content"][0]["text"].split()[-1]


class LatencyEndpoint:
    def __init__(self, latency_s: float = 0.0, reply=last_word, script=(), port: int = 0):
        self.latency_s, self.reply, self.script = latency_s, reply, list(script)
        self.requests, self.in_flight, self.peak = [], 0, 0
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
        body = json.loads(raw)
        self.requests.append({"path": path, "body": body, "auth": headers.get("authorization")})
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        if self.script:
            status, extra = self.script.pop(0)
            return status, extra, b"{}"
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
