"""An OpenAI-compatible chat-completions server on loopback for tests of model-written text."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    """Answers each chat completion with the next scripted content, then with `reply` once the script
    is spent, and keeps every request (path, body, Authorization header). `rate_limit_first` answers
    the first request 429; `slow` answers after 1.5 s, past a short client timeout."""

    def __init__(self, contents=(), reply=None):
        self.contents, self.reply, self.requests = list(contents), reply, []
        self.rate_limit_first = self.slow = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if server.rate_limit_first and len(server.requests) == 1:
                    self.send_response(429)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                if server.slow:
                    time.sleep(1.5)
                content = server.contents.pop(0) if server.contents else server.reply
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll so that close() returns in milliseconds instead of the default half second.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def prompts(self) -> list[str]:
        """The text of each request's first message, in the order they came."""
        return [request["body"]["messages"][0]["content"][0]["text"] for request in self.requests]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
