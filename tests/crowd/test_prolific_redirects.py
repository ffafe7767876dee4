"""#44: the Prolific client never carries its token to another host: a redirect off the API's scheme and
host is refused (ProlificError naming it), and the other host hears nothing; a redirect on the API's own
host is followed."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crowd.prolific import ProlificClient, ProlificError


class Server:
    """A loopback server answering each GET from `answer(path)` -> (status, headers, body), recording
    every request's path and Authorization header."""

    def __init__(self, answer):
        self.seen = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 (http.server's name)
                server.seen.append((self.path, self.headers.get("Authorization")))
                status, headers, body = answer(self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def elsewhere():
    server = Server(lambda path: (200, {"Content-Type": "application/json"}, b'{"stolen": true}'))
    yield server
    server.close()


def test_a_redirect_to_another_host_is_refused_and_the_token_stays_home(elsewhere):
    api = Server(lambda path: (302, {"Location": f"{elsewhere.url}/collect{path}"}, b""))
    try:
        client = ProlificClient(token="the-token", base_url=api.url + "/api/v1/", attempts=1)
        with pytest.raises(ProlificError) as refused:
            client.get_submission("SUB1")
        assert refused.value.status == 302 and "another host" in refused.value.detail
        assert api.seen == [("/api/v1/submissions/SUB1/", "Token the-token")]
        assert elsewhere.seen == []
    finally:
        api.close()


def test_a_redirect_on_the_apis_own_host_is_followed():
    def answer(path):
        if path.startswith("/api/v1/submissions/SUB1/"):
            return 301, {"Location": "/api/v1/moved/SUB1/"}, b""
        return 200, {"Content-Type": "application/json"}, json.dumps({"id": "SUB1"}).encode()

    api = Server(answer)
    try:
        client = ProlificClient(token="the-token", base_url=api.url + "/api/v1/", attempts=1)
        assert client.get_submission("SUB1") == {"id": "SUB1"}
        assert [auth for _, auth in api.seen] == ["Token the-token", "Token the-token"]
    finally:
        api.close()
