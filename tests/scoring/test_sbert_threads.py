"""The encoder's thread settings (scoring/sbert.py): intra-op threads = physical cores, inter-op 1, and
OpenMP threads that sleep rather than spin at a barrier (set before torch loads)."""

import os

from scoring import sbert


class FakeTorch:
    def __init__(self, interop_error=False):
        self.threads = self.interop = None
        self.interop_error = interop_error

    def set_num_threads(self, n):
        self.threads = n

    def set_num_interop_threads(self, n):
        if self.interop_error:
            raise RuntimeError("already started")
        self.interop = n


def test_threads_are_the_physical_cores_and_interop_one():
    fake = FakeTorch()
    assert sbert.configure_threads(fake) == sbert.physical_cores()
    assert fake.threads == sbert.physical_cores() and fake.interop == 1


def test_interop_already_started_is_left_alone():
    fake = FakeTorch(interop_error=True)
    sbert.configure_threads(fake)
    assert fake.threads == sbert.physical_cores() and fake.interop is None


def test_physical_cores_never_exceed_the_cpus_allowed():
    assert 1 <= sbert.physical_cores() <= len(os.sched_getaffinity(0))


def test_openmp_threads_wait_passively():
    assert os.environ["OMP_WAIT_POLICY"].upper() == "PASSIVE"
