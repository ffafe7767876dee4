"""Chat-completion requests in flight: the transport of the OpenAI-compatible adapter.

An endpoint (a vLLM server, a hosted API) batches the requests it is sent at once, so a run keeps up
to `max_in_flight` of them open (asyncio with httpx, on an event loop in a thread of its own, so the
caller stays synchronous: a Celery task, or the request that runs tasks in-process in the embedded
default). The window is a semaphore whose size the endpoint steers: a 429 halves it (down to one)
and the request waits as `Retry-After` says (seconds or an HTTP date) before it is sent again; each
answer after that widens it by one, back up to `max_in_flight`. 5xx answers and connections that
fail (refused, reset) are retried with exponential backoff; a timeout or a last failure is the
item's error. A redirect is never followed: it would carry the bearer key to wherever it points."""

import asyncio
import email.utils
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import UTC

import httpx

MAX_WAIT_S = 30.0  # the longest Retry-After or backoff honoured between two tries


class EndpointError(RuntimeError):
    pass


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
                 backoff_s: float = 1.0, max_in_flight: int = 16):
        self.url = url
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_in_flight = max_in_flight
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
            last = attempt == self.max_retries
            async with self.window:
                started[:] = started or [time.monotonic()]
                try:
                    response = await self._client.post(self.url, json=body)
                except httpx.TimeoutException:
                    raise EndpointError(f"no answer within {self.timeout_s:g} s") from None
                except httpx.TransportError as exc:  # refused, reset, closed mid-answer
                    if last:
                        raise EndpointError(f"cannot reach the endpoint after {attempt + 1} tries "
                                            f"({type(exc).__name__})") from None
                    response = None
            if response is None:
                await asyncio.sleep(min(self.backoff_s * 2**attempt, MAX_WAIT_S))
                continue
            if response.is_redirect:
                raise EndpointError(f"the endpoint redirects (HTTP {response.status_code}) to "
                                    f"{response.headers.get('Location', '?')}; not followed, so the key stays here")
            if response.status_code == 429 or response.status_code >= 500:
                if last:
                    raise EndpointError(f"HTTP {response.status_code} from the endpoint after {attempt + 1} tries")
                if response.status_code == 429:
                    self.window.narrow()
                wait_s = retry_after_s(response.headers.get("Retry-After"))
                await asyncio.sleep(min(self.backoff_s * 2**attempt if wait_s is None else wait_s, MAX_WAIT_S))
                continue
            if response.status_code >= 400:
                raise EndpointError(f"HTTP {response.status_code} from the endpoint")
            self.window.widen()
            try:
                return response.json()["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError, ValueError):
                raise EndpointError("the endpoint's answer has no choices[0].message.content") from None
        raise AssertionError("unreachable")


def answers_in_flight(client: EndpointClient, jobs: Iterable[tuple[object, dict | Exception]]
                      ) -> Iterator[tuple[object, str, Exception | None, int]]:
    """(key, content, error, latency_ms) for each (key, body) job, in the order the answers come.

    Bodies are taken from `jobs` while fewer than two windows' worth are pending: the second waits in
    the loop, so a slot that frees is filled at once, not when this thread next wakes (it also builds
    the requests and writes the answers), and a long run does not hold every prompt and picture in
    memory. A job whose body is an Exception (its request could not be built) comes back at once as
    that error. Closing the iterator (a cancelled run) cancels what is still pending."""
    jobs = iter(jobs)
    pending: dict[Future, object] = {}
    try:
        while True:
            while len(pending) < 2 * client.max_in_flight and (job := next(jobs, None)) is not None:
                key, body = job
                if isinstance(body, Exception):
                    yield key, "", body, 0
                    continue
                pending[client.submit(body)] = key
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                key = pending.pop(future)
                error = future.exception()
                content, latency_ms = (None, getattr(error, "latency_ms", 0)) if error else future.result()
                yield key, content or "", error, latency_ms
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
