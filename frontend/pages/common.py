from django.shortcuts import render

from annotation.models import Campaign
from benchmarks import roles
from benchmarks.errors import DomainError
from benchmarks.models import Benchmark
from humaneval.models import Study

# Crowd workers have no password: they are logged in by their platform link.
BACKEND = "benchmarks.auth.CachedModelBackend"


def error_page(request, exc: DomainError):
    return render(request, "frontend/error.html", {"message": exc.message, "field": exc.field},
                  status=exc.status_code)


def home(request):
    user = request.user
    return render(request, "frontend/home.html", {
        "is_admin": roles.has_role(user, roles.ADMIN),
        "is_reviewer": roles.has_role(user, roles.REVIEWER),
        "benchmarks": Benchmark.objects.all(),
        "campaigns": Campaign.objects.filter(is_active=True).select_related("benchmark"),
        "studies": Study.objects.filter(is_open=True),
    })
