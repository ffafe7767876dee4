"""Chat-completion requests in flight: the transport of the OpenAI-compatible adapter.

An endpoint (a vLLM server, a hosted API) batches the requests it is sent at once, so a run keeps up
to `max_in_flight` of them open (asyncio with httpx, on an event loop in a thread of its own, so the
caller stays synchronous: a Celery task, or the request that runs tasks in-process in the embedded
default). The window is a semaphore whose size the endpoint steers: a 429 halves it (down to one)
and the request waits as `Retry-After` says (seconds or an HTTP date; `retry-after-ms` first, as the
OpenAI SDK reads it) before it is sent again; each answer after that widens it by one, back up to
`max_in_flight`.

What is retried is what the OpenAI SDK retries: 408, 409, 429 and 5xx answers, connections that fail
(refused, reset) and timeouts, up to `max_retries` times after the first try, waiting `backoff_s`
doubled each time (less up to a quarter, so a window of requests that failed together does not come
back together), or what the endpoint's Retry-After asks, never more than `max_wait_s`. An
`x-should-retry` header overrides the status, as the SDK lets it. 400, 401, 403, 404, 422 and the
other client errors are not retried: the request itself is wrong. Either way the item's error
(EndpointError) names the status, how many tries it took and the endpoint's own message. A redirect
is never followed: it would carry the bearer key to wherever it points."""

import asyncio
import email.utils
import math
import os
import random
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import UTC
from http import HTTPStatus

import httpx

MAX_WAIT_S = 30.0  # the longest Retry-After or backoff honoured between two tries
RETRIED_STATUSES = frozenset({408, 409, 429})  # and every 5xx
MESSAGE_CHARS = 300  # of the endpoint's message kept in the item's error


class EndpointError(RuntimeError):
    """An item's request failed: `status` is the last HTTP status (None without an answer), `tries`
    how many times it was sent."""

    def __init__(self, message: str, status: int | None = None, tries: int = 1):
        super().__init__(message)
        self.status, self.tries = status, tries


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date (RFC 9110 10.2.3);
    None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        when = when.replace(tzinfo=UTC)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def asked_wait_s(headers: httpx.Headers) -> float | None:
    """The wait an answer asks for: `retry-after-ms` (OpenAI's, milliseconds), else `Retry-After`."""
    try:
        return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except (KeyError, ValueError):
        return retry_after_s(headers.get("retry-after"))


def should_retry(response: httpx.Response) -> bool:
    asked = (response.headers.get("x-should-retry") or "").strip().lower()
    if asked in ("true", "false"):
        return asked == "true"
    return response.status_code in RETRIED_STATUSES or response.status_code >= 500


def status_text(status: int) -> str:
    """`HTTP 503 Service Unavailable`: the standard phrase, not the server's (which may say anything)."""
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def endpoint_message(response: httpx.Response) -> str:
    """What the endpoint says went wrong: OpenAI's `{"error": {"message"}}`, vLLM's and FastAPI's
    `{"message"}` / `{"detail"}`, or the start of the body's text; one line, shortened."""
    try:
        data = response.json()
    except ValueError:
        data = None
    message = None
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or data.get("message") or data.get("detail")
    if message is None or message == "":
        message = response.text
    message = " ".join(str(message).split())
    return message[:MESSAGE_CHARS] + ("…" if len(message) > MESSAGE_CHARS else "") or "(no message)"


def _tries(n: int) -> str:
    return f"{n} {'try' if n == 1 else 'tries'}"


class Window:
    """At most `limit` requests at once; `limit` halves on a 429 and grows back by one per answer."""

    def __init__(self, size: int):
        self.size = self.limit = size
        self.active = 0
        self.peak = 0  # the most requests open at once, for benches and progress
        self._changed = asyncio.Condition()

    async def __aenter__(self):
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1
            self.peak = max(self.peak, self.active)

    async def __aexit__(self, *exc):
        async with self._changed:
            self.active -= 1
            self._changed.notify_all()

    def narrow(self) -> None:
        self.limit = max(1, self.limit // 2)

    def widen(self) -> None:
        self.limit = min(self.size, self.limit + 1)


class EndpointClient:
    """Posts chat-completion bodies to one URL with up to `max_in_flight` open at once; `submit` may be
    called from any thread and returns a Future of the answer's content."""

    def __init__(self, url: str, api_key: str = "", timeout_s: float = 60.0, max_retries: int = 3,
                 backoff_s: float = 1.0, max_in_flight: int = 16, max_wait_s: float = MAX_WAIT_S):
        self.url = url
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_s = backoff_s
        self.max_in_flight = max_in_flight
        self.max_wait_s = max_wait_s
        self._lock = threading.Lock()
        self._pid = None  # the loop belongs to the process that started it (a forked worker starts its own)
        self._loop = self._client = self.window = None

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._pid != os.getpid():
                self._loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve(loop=self._loop):
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                threading.Thread(target=serve, name="endpoint-client", daemon=True).start()
                ready.wait()
                self._client = asyncio.run_coroutine_threadsafe(self._new_client(), self._loop).result()
                self._pid = os.getpid()
            return self._loop

    async def _new_client(self) -> httpx.AsyncClient:
        self.window = Window(self.max_in_flight)
        limits = httpx.Limits(max_connections=self.max_in_flight, max_keepalive_connections=self.max_in_flight)
        return httpx.AsyncClient(timeout=self.timeout_s, limits=limits, follow_redirects=False,
                                 headers=self.headers)

    def submit(self, body: dict) -> Future:
        """A Future of (content, latency_ms: from its first send to its answer, retries included)."""
        return asyncio.run_coroutine_threadsafe(self._timed(body), self._started_loop())

    def answer(self, body: dict) -> str:
        return self.submit(body).result()[0]

    def wait_s(self, attempt: int, asked_s: float | None = None) -> float:
        """The pause before the try after `attempt` (0: the first): what the endpoint asked for, else
        the backoff doubled per try less up to a quarter; at most `max_wait_s` either way."""
        if asked_s is not None:
            return min(asked_s, self.max_wait_s)
        return min(self.backoff_s * 2**attempt, self.max_wait_s) * (1 - 0.25 * random.random())

    async def _timed(self, body: dict) -> tuple[str, int]:
        started = []
        try:
            content = await self._send(body, started)
        except EndpointError as error:
            error.latency_ms = int((time.monotonic() - started[0]) * 1000) if started else 0
            raise
        return content, int((time.monotonic() - started[0]) * 1000)

    async def _send(self, body: dict, started: list) -> str:
        for attempt in range(self.max_retries + 1):
            tries, last = attempt + 1, attempt == self.max_retries
            async with self.window:
                started[:] = started or [time.monotonic()]
                try:
                    response = await self._client.post(self.url, json=body)
                except httpx.TimeoutException:
                    response = None
                    failure = EndpointError(f"no answer within {self.timeout_s:g} s, {_tries(tries)}", tries=tries)
                except httpx.TransportError as exc:  # refused, reset, closed mid-answer
                    response = None
                    failure = EndpointError(f"cannot reach the endpoint after {_tries(tries)} "
                                            f"({type(exc).__name__}: {exc})", tries=tries)
            if response is None:
                if last:
                    raise failure
                await asyncio.sleep(self.wait_s(attempt))
                continue
            status = response.status_code
            if response.is_redirect:
                raise EndpointError(f"the endpoint redirects (HTTP {status}) to "
                                    f"{response.headers.get('Location', '?')}; not followed, so the key stays here",
                                    status, tries)
            if 200 <= status < 300:
                self.window.widen()
                try:
                    return response.json()["choices"][0]["message"]["content"] or ""
                except (KeyError, IndexError, TypeError, ValueError):
                    raise EndpointError("the endpoint's answer has no choices[0].message.content",
                                        status, tries) from None
            said = f"{status_text(status)} from the endpoint"
            if not should_retry(response):
                raise EndpointError(f"{said}, not retried: {endpoint_message(response)}", status, tries)
            if last:
                raise EndpointError(f"{said} after {_tries(tries)}: {endpoint_message(response)}", status, tries)
            if status == 429:
                self.window.narrow()
            await asyncio.sleep(self.wait_s(attempt, asked_wait_s(response.headers)))
        raise AssertionError("unreachable")


AHEAD_WINDOWS = 2  # windows' worth of bodies kept pending at least: one open, one waiting in the loop
MAX_AHEAD_WINDOWS = 8  # and at most, however long the caller pauses (a bound on prompts and pictures held)


def windows_ahead(paused_s: float, latency_s: float | None) -> int:
    """How many windows' worth of requests to keep pending so that the window stays full while the
    caller is away for `paused_s` (writing what it was handed): one open, and one more for each
    `latency_s` the pause lasts, within AHEAD_WINDOWS..MAX_AHEAD_WINDOWS."""
    if not latency_s or paused_s <= 0:
        return AHEAD_WINDOWS
    return min(MAX_AHEAD_WINDOWS, max(AHEAD_WINDOWS, 1 + math.ceil(paused_s / latency_s)))


def answers_in_flight(client: EndpointClient, jobs: Iterable[tuple[object, dict | Exception]]
                      ) -> Iterator[tuple[object, str, Exception | None, int]]:
    """(key, content, error, latency_ms) for each (key, body) job, in the order the answers come.

    Bodies are taken from `jobs` while fewer than a few windows' worth are pending: those beyond the
    open window wait in the loop, so a slot that frees is filled at once, not when this thread next
    wakes (it also builds the requests and writes the answers), and a long run does not hold every
    prompt and picture in memory. How many windows wait follows the caller: the longest it has stayed
    away between two answers (a write of predictions, a progress report) over the answers' latency
    (`windows_ahead`), so a write that outlasts a round of answers still finds the next requests
    queued, and the endpoint is never left idle while this thread writes. A job whose body is an
    Exception (its request could not be built) comes back at once as that error. Closing the
    iterator (a cancelled run) cancels what is still pending."""
    jobs = iter(jobs)
    pending: dict[Future, object] = {}
    ahead, longest_pause_s, latency_s = AHEAD_WINDOWS, 0.0, None
    unbuilt = []  # jobs taken whose body is an Exception, handed back before the next answer

    def top_up() -> None:
        while len(pending) < ahead * client.max_in_flight and (job := next(jobs, None)) is not None:
            key, body = job
            if isinstance(body, Exception):
                unbuilt.append((key, "", body, 0))
            else:
                pending[client.submit(body)] = key

    try:
        while True:
            top_up()
            while unbuilt:
                yield unbuilt.pop(0)
            if not pending:  # top_up stops short only when the window is full: every job is taken
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                key = pending.pop(future)
                error = future.exception()
                content, latency_ms = (None, getattr(error, "latency_ms", 0)) if error else future.result()
                if latency_ms > 0:
                    latency_s = latency_ms / 1000 if latency_s is None else min(latency_s, latency_ms / 1000)
                handed = time.monotonic()
                yield key, content or "", error, latency_ms
                paused_s = time.monotonic() - handed
                if paused_s > longest_pause_s:
                    longest_pause_s = paused_s
                    ahead = windows_ahead(longest_pause_s, latency_s)
                top_up()  # what the caller's pause (a write) drained is queued again before the next answer
    finally:
        for future in pending:
            future.cancel()


def predictions_in_flight(adapter, run, work, request_for, prediction_for) -> Iterator[list]:
    """A run's work (item, variant, repeat) answered by an endpoint adapter with requests in flight: one
    list of one prediction per answer, as they come. `request_for(adapter, run, item, variant, repeat)`
    builds a request (an error fails that item only), `prediction_for(run, item, variant, repeat,
    **fields)` the row (modeleval.services)."""

    def jobs():
        for item, variant, repeat in work:
            try:
                request = request_for(adapter, run, item, variant, repeat)
            except Exception as exc:  # a missing stimulus fails this item only
                yield (item, variant, repeat, ""), exc
                continue
            yield (item, variant, repeat, request.prompt_sha256 if request.prompt else ""), request

    answers = adapter.answers_in_flight(jobs())
    try:
        for (item, variant, repeat, prompt_sha256), output, error, latency_ms in answers:
            yield [prediction_for(run, item, variant, repeat, prompt_sha256=prompt_sha256, output=output,
                                  latency_ms=latency_ms, error=f"{type(error).__name__}: {error}" if error else "")]
    finally:
        answers.close()  # a cancelled run: what is still open is cancelled
