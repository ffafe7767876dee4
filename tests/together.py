"""Requests released at the same instant from several threads: the races the row locks and unique
keys must settle."""

import threading
from concurrent.futures import ThreadPoolExecutor

from django.db import connections


def fire(request, n: int):
    """Call request(i) for i in 0..n-1 from n threads released together; their results in order."""
    barrier = threading.Barrier(n)

    def one(i):
        try:
            barrier.wait(timeout=30)
            return request(i)
        finally:
            connections.close_all()  # this thread's connection, so the test database can be dropped

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))
