"""HypoLab settings, read from environment variables.

Unset variables give the embedded default: SQLite, local media folder, in-memory
channel layer, Celery tasks run in-process. Set DATABASE_URL / REDIS_URL / S3_* for
the production stack (see README "Configuration").
"""

import os
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import environ
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

# Off unless DEBUG=1: with it on, a mistyped address shows the whole URL map and an error a traceback, to
# anyone (the demo's crowd workers too). The test suite turns it on (pyproject's pytest env).
DEBUG = env.bool("DEBUG", default=False)
# The embedded default (no services named): the demo and a laptop, on http://127.0.0.1.
EMBEDDED = not any(os.environ.get(name) for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "S3_BUCKET"))


def installed_secret_key(path: Path) -> str:
    """This install's own key, made once at random into var/ (git-ignored) and read back after: no key
    ships with the code, so nobody can sign a session or a download link with a key they read in it."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f"{path.name}.{os.getpid()}")
    draft.write_text(secrets.token_urlsafe(64))
    draft.chmod(0o600)
    try:
        os.link(draft, path)  # atomic, and refused if another process made it first: theirs is kept
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()


# SECRET_KEY signs sessions and download links. Unset, the embedded default (no DATABASE_URL, REDIS_URL
# or S3_BUCKET: the demo, a laptop) makes its own in var/secret_key; a deployment with services and DEBUG
# off refuses to start instead of running on a key someone else could know.
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY:
    if not (DEBUG or EMBEDDED):
        raise ImproperlyConfigured("Set SECRET_KEY: with DEBUG off HypoLab does not start without its own key.")
    SECRET_KEY = installed_secret_key(VAR_DIR / "secret_key")
if len(SECRET_KEY) < 50 and not DEBUG:  # a short key can be guessed offline from any signed cookie or link
    raise ImproperlyConfigured(f"SECRET_KEY has {len(SECRET_KEY)} characters: with DEBUG off it needs at least 50 "
                               "(python -c 'import secrets; print(secrets.token_urlsafe(50))').")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS (`manage.py check --deploy` passes with DEBUG false): unless told otherwise a production site is
# served over HTTPS only: plain HTTP is redirected, cookies are sent only over HTTPS and browsers are told to
# come back over HTTPS for a year (HSTS). HTTPS=false turns all of it off, for a production-like stack on
# plain HTTP (docker-compose on localhost, load tests); each setting can also be set on its own. Behind a
# proxy that ends TLS, SECURE_PROXY_SSL_HEADER names the header it sets, e.g. HTTP_X_FORWARDED_PROTO,https
# (only when the proxy always sets or strips it: a client could send it too).
HTTPS = env.bool("HTTPS", default=not (DEBUG or EMBEDDED))  # the embedded demo is served on plain HTTP
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
SECURE_PROXY_SSL_HEADER = env.tuple("SECURE_PROXY_SSL_HEADER", default=None) or None
SECURE_REDIRECT_EXEMPT = env.list("SECURE_REDIRECT_EXEMPT", default=[])
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc as static files: /api/v1/docs/ works offline
    "csp",  # Content-Security-Policy (CONTENT_SECURITY_POLICY below)
    "channels",
    "axes",  # failed-login lockout (config/throttle.py)
    "core",
    "crowd",
    "benchmarks",
    "scenes",
    "annotation",
    "review",
    "construction",
    "humaneval",
    "modeleval",
    "results",
    "demo",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # Content-Security-Policy on every answer (policy below)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # NUL characters, lone surrogates, deep JSON and oversize bodies: 400 before any view
    "config.middleware.InputGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.api.BrokerUnavailableMiddleware",  # a page that cannot enqueue: 503 with Retry-After
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into config.throttle's 429
]
# Naming the request's user in the status history (core.history.ActorMiddleware) is off unless asked
# for: measured, it took the evaluators' p95 under load from about 275 ms to 420-630 ms
# (docs/PERFORMANCE.md) and the cause is not yet found. Without it the history names no actor.
STATUS_HISTORY_ACTOR = env.bool("STATUS_HISTORY_ACTOR", default=False)
if STATUS_HISTORY_ACTOR:
    MIDDLEWARE.insert(MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
                      "core.history.ActorMiddleware")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'hypolab.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads (web + in-process tasks) write to one file: wait instead of failing. A deferred
    # transaction that reads and then writes is refused at once beside another ("database is locked":
    # waiting could deadlock), so each takes the write lock when it begins and the others wait for it.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 20, "transaction_mode": "IMMEDIATE"})
    # The suite's SQLite pass tests a file, as the demo runs: Django's default in-memory test database is
    # shared-cache, whose table locks refuse a second thread's read at once ("database table is locked")
    # where a file waits. One file per process (pytest-xdist adds the worker's name), so runs side by side
    # do not meet.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"hypolab-test-{os.getpid()}.sqlite3")}
else:
    # Opening a connection costs more than most requests. A WSGI server (gunicorn) keeps its threads,
    # so each may keep its connection for CONN_MAX_AGE seconds. Off by default: an ASGI server (daphne)
    # runs every request on a new thread, and would leave a connection open behind each.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Behind PgBouncer in transaction mode (PGBOUNCER=1; docs/DEPLOY.md) a connection may serve another
    # client between two transactions: no server-side cursors (the release export then reads in keyset
    # pages, benchmarks/releases/stream.py) and no prepared statements (psycopg prepares a query it has run 5
    # times). Advisory locks here are transaction-scoped (core/sql.py), which transaction pooling keeps.
    if env.bool("PGBOUNCER", default=False):
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
        DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# The test suite (pyproject [tool.pytest] env, inherited by the servers and workers it starts) hashes
# with MD5: PBKDF2 costs most of a second per user. Honoured only with DEBUG, so never in production.
if DEBUG and env.bool("HYPOLAB_FAST_PASSWORD_HASHER", default=False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                        "django.contrib.auth.hashers.PBKDF2PasswordHasher"]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))  # filled by `collectstatic` (the image)
# Local media: MEDIA_URL is served only through benchmarks.media.serve_media, which checks who asks;
# never point a web server or a public folder at MEDIA_ROOT.
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(VAR_DIR / "media")))

# Storage: local folder by default; an S3-compatible bucket when S3_BUCKET is set.
S3_BUCKET = env("S3_BUCKET", default="")
if S3_BUCKET:
    DEFAULT_FILE_STORAGE_BACKEND = "storages.backends.s3.S3Storage"
    DEFAULT_STORAGE_OPTIONS = {
        "bucket_name": S3_BUCKET,
        "endpoint_url": env("S3_ENDPOINT_URL", default=None),
        "access_key": env("S3_ACCESS_KEY_ID", default=None),
        "secret_key": env("S3_SECRET_ACCESS_KEY", default=None),
        "region_name": env("S3_REGION", default="us-east-1"),
        # The bucket is private: objects are written with no ACL header (so they stay the bucket
        # owner's, and buckets that disable ACLs accept the PUT) and are read only through presigned
        # GETs, which pages and the API hand out after benchmarks.media's check (docs/DECISIONS.md).
        "default_acl": None,
        "querystring_auth": True,
        # How long a presigned URL on a page works: longer than the pages' caches of them (300 s) and
        # than a video being watched and sought.
        "querystring_expire": env.int("MEDIA_URL_EXPIRY_S", default=3600),
        "signature_version": "s3v4",  # presigned URLs carry X-Amz-Expires; every region accepts v4
        "file_overwrite": False,
    }
else:
    DEFAULT_FILE_STORAGE_BACKEND = "django.core.files.storage.FileSystemStorage"
    DEFAULT_STORAGE_OPTIONS = {}
STORAGES = {
    "default": {"BACKEND": DEFAULT_FILE_STORAGE_BACKEND, "OPTIONS": DEFAULT_STORAGE_OPTIONS},
    # Production (DEBUG off, services named): names carry a hash of the content (app.3f9a1c.js) written by
    # collectstatic with a manifest, so a CDN or browser may keep them for a year; without a manifest (no
    # collectstatic yet) the plain names are served (config/static.py). The demo and tests: plain names.
    "staticfiles": {"BACKEND": "config.static.ManifestStaticStorage"
                    if env.bool("STATIC_MANIFEST", default=not (DEBUG or EMBEDDED))
                    else "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Content-Security-Policy (django-csp): scripts only from this site, and inline scripts only with the
# request's nonce (`<script nonce="{{ request.csp_nonce }}">` in templates; no inline event handlers);
# styles may be inline (style attributes, ReDoc's and Swagger UI's); images, videos and the viewer's
# downloads from this site, data:/blob: URLs and the S3 endpoint when files are in a bucket (presigned
# URLs: uploads PUT there, pages fetch and show from there); websockets to this host (ws:/wss:);
# workers from blob: (ReDoc's search).
if S3_BUCKET:
    _endpoint = urlsplit(env("S3_ENDPOINT_URL", default="") or "")
    _origin = f"{_endpoint.scheme}://{_endpoint.netloc}" if _endpoint.netloc else "https://*.amazonaws.com"
    STORAGE_ORIGINS = [_origin]
else:
    STORAGE_ORIGINS = []
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:", *STORAGE_ORIGINS],
        "media-src": [SELF, "data:", "blob:", *STORAGE_ORIGINS],
        "connect-src": [SELF, "ws:", "wss:", *STORAGE_ORIGINS],
        "worker-src": [SELF, "blob:"],
        "font-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    },
}

# How long signed URLs work: browser uploads straight to storage, and asset downloads.
UPLOAD_URL_EXPIRY_S = env.int("UPLOAD_URL_EXPIRY_S", default=900)
DOWNLOAD_URL_EXPIRY_S = env.int("DOWNLOAD_URL_EXPIRY_S", default=300)
# An imported .zip may unpack to at most this many bytes in all (scenes/files.py): a zip
# bomb is refused with 400 instead of filling a worker's memory.
IMPORT_MAX_UNPACKED_BYTES = env.int("IMPORT_MAX_UNPACKED_BYTES", default=2 * 1024**3)
# Release files are streamed (benchmarks/releases/stream.py); the harness files (VLMEvalKit, lmms-eval, the
# published shape) hold images and are built in memory, so a release of more items than this goes without
# them (its card says so). 0: no limit.
RELEASE_HARNESS_MAX_ITEMS = env.int("RELEASE_HARNESS_MAX_ITEMS", default=100_000)

# Redis: unset means the embedded default (in-process tasks, in-memory channel layer). One REDIS_URL serves
# every role unless a role has its own (docs/DEPLOY.md): CELERY_BROKER_URL, CELERY_RESULT_BACKEND,
# CACHE_REDIS_URL (cache and sessions), CHANNEL_REDIS_URL (websockets), LOCK_REDIS_URL (beat's lock, in-flight
# batches). Each may be a Sentinel URL, `sentinel://s1:26379;sentinel://s2:26379/0`, for the master named
# REDIS_SENTINEL_MASTER (core/redis_roles.py).
from core import redis_roles  # noqa: E402 -- no Django import in it

REDIS_URL = env("REDIS_URL", default="")
REDIS_SENTINEL_MASTER = env("REDIS_SENTINEL_MASTER", default="mymaster")
BROKER_REDIS_URL = env("CELERY_BROKER_URL", default="") or REDIS_URL
RESULT_REDIS_URL = env("CELERY_RESULT_BACKEND", default="") or REDIS_URL
CACHE_REDIS_URL = env("CACHE_REDIS_URL", default="") or REDIS_URL
CHANNEL_REDIS_URL = env("CHANNEL_REDIS_URL", default="") or REDIS_URL
LOCK_REDIS_URL = env("LOCK_REDIS_URL", default="") or REDIS_URL
# Several stacks may share one Redis (parallel test runs): a prefix keeps their queues apart. The
# suite's parallel workers (pytest-xdist names each in PYTEST_XDIST_WORKER, inherited by the servers
# and Celery workers a test starts) each add their own.
REDIS_KEY_PREFIX = env("REDIS_KEY_PREFIX", default="") + (
    f"{os.environ['PYTEST_XDIST_WORKER']}-" if os.environ.get("PYTEST_XDIST_WORKER") else "")
CACHES = {
    "default": {"BACKEND": "config.cache.RedisCache", "LOCATION": CACHE_REDIS_URL,
                "KEY_PREFIX": REDIS_KEY_PREFIX,
                "OPTIONS": redis_roles.cache_options(CACHE_REDIS_URL, REDIS_SENTINEL_MASTER)}
    if CACHE_REDIS_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}
# Sessions are read on every request: from the cache (Redis with the services stack), written
# through to the database so a cache flush logs nobody out (config/sessions.py). Signed-in users
# and their roles are cached too (core/auth.py).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "core.auth.CachedModelBackend"]
SESSION_ENGINE = env("SESSION_ENGINE", default="config.sessions")
if BROKER_REDIS_URL:
    CELERY_BROKER_URL = BROKER_REDIS_URL
    CELERY_RESULT_BACKEND = RESULT_REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
    # Redis hands an unacknowledged task to another worker after this many seconds: inference
    # batches are small so they finish well inside it, and a crashed worker's batch comes back.
    # Sweep for such orphaned tasks every 10 s (kombu's default only scans on every 10th sweep).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
        "unacked_restore_interval": env.float("CELERY_UNACKED_RESTORE_S", default=10.0),
        "unacked_restore_throttle": 1,
    }
    # A killed GPU worker's batch does not wait for that hour: each batch beats every
    # INFERENCE_HEARTBEAT_S while it runs, and the reaper (beat, every 15 s) puts back the message of a
    # batch not beaten for INFERENCE_STALE_S (modeleval/runs/inflight.py): running again within ~35 s.
    if REDIS_KEY_PREFIX:
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = REDIS_KEY_PREFIX
    CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = dict(CELERY_BROKER_TRANSPORT_OPTIONS)
    if redis_roles.is_sentinel(BROKER_REDIS_URL):  # kombu and celery read sentinel:// URLs given the master
        CELERY_BROKER_TRANSPORT_OPTIONS["master_name"] = REDIS_SENTINEL_MASTER
    if redis_roles.is_sentinel(RESULT_REDIS_URL):
        CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS["master_name"] = REDIS_SENTINEL_MASTER
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_roles.channel_host(CHANNEL_REDIS_URL, REDIS_SENTINEL_MASTER)],
                       "prefix": f"{REDIS_KEY_PREFIX}asgi"},
        }
    }
    # Beat replicas share a lock (config/beat.py): run two for failover, only one sends.
    CELERY_BEAT_SCHEDULER = "config.beat.LockedScheduler"
else:
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    # Embedded default on purpose: no broker to talk to, so tasks run in the caller's process; on the
    # demo's web server (TASKS_IN_THREADS=1, scripts/demo) in a thread of it, so no request waits for
    # long work (config/celery.py).
    CELERY_TASK_ALWAYS_EAGER = True
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
CELERY_TASK_EAGER_PROPAGATES = True
# Honoured only where tasks run in-process (no broker): config/celery.py.
TASKS_IN_THREADS = env.bool("TASKS_IN_THREADS", default=False)
BEAT_LOCK_TTL_S = env.float("BEAT_LOCK_TTL_S", default=30.0)
# A campaign dashboard's counts are cached until a write to the campaign, or this long at most (annotation/progress.py).
CAMPAIGN_PROGRESS_CACHE_S = env.int("CAMPAIGN_PROGRESS_CACHE_S", default=30)
# Nothing reads a task's return value: tasks write their results to the database. Without this, sending
# a task also subscribes to its result in Redis, and with Redis down that retried for 20 s and then left
# the process unable to send any task until restarted; now a send fails in under a second (503).
CELERY_TASK_IGNORE_RESULT = True
INFERENCE_HEARTBEAT_S = env.float("INFERENCE_HEARTBEAT_S", default=5.0)
INFERENCE_STALE_S = env.float("INFERENCE_STALE_S", default=20.0)
INFERENCE_REAPER_S = env.float("INFERENCE_REAPER_S", default=15.0)  # how often beat looks for stale batches
# Local checkpoints load only where this is on (GPU workers; the embedded default runs tasks in-process):
# elsewhere a prompt for one goes to a GPU worker that holds it, and waits this long for the answer.
LOCAL_CHECKPOINTS = env.bool("LOCAL_CHECKPOINTS", default=EMBEDDED)
LOCAL_COMPLETION_TIMEOUT_S = env.float("LOCAL_COMPLETION_TIMEOUT_S", default=600.0)
# A scene's scan stored this long ago with no viewer files yet: its processing died, and the beat's
# reaper sends it again (scenes.processing.scenes_to_reprocess).
SCENE_PROCESSING_STALE_S = env.float("SCENE_PROCESSING_STALE_S", default=1800.0)
# A running job (core/jobs.py) that reported no progress for this long lost its worker: it is failed.
JOB_STALE_S = env.float("JOB_STALE_S", default=900.0)
# A release export beats as it writes (core.jobs.beat_job, every 5 s at most): one silent this long lost
# its worker; with the sweep every 10 s its version can be exported again within a minute of the kill.
RELEASE_EXPORT_STALE_S = env.float("RELEASE_EXPORT_STALE_S", default=45.0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "core.api.AutoSchema",  # documents the error answers of every operation
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HypoLab API",
    "DESCRIPTION": "Build spatial-reasoning benchmarks with a human baseline.",
    "VERSION": "1",
    # Request bodies get their own components (no read-only fields in them, required as sent).
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "AssignmentStatusEnum": "annotation.models.Assignment.Status",
        "CampaignKindEnum": "annotation.models.Campaign.Kind",
        "ChangeStatusEnum": "benchmarks.models.ContextChange.Status",
        "ItemStatusEnum": "benchmarks.models.Item.Status",
        "ReleaseStatusEnum": "benchmarks.models.Release.Status",
        "JobStatusEnum": "core.models.Job.Status",
        "PipelineStageKindEnum": "construction.models.PipelineStage.Kind",
    },
}

# Throttling (config/throttle.py). Logins: AXES_FAILURE_LIMIT failures for an account from one
# address lock that account from that address, and as many from one address (any accounts) lock the
# address, for LOGIN_LOCKOUT_MINUTES after the last one (429, the right password included). An
# account is never locked from everywhere: failures from anyone's address would lock out the admin.
# Attempts are counted in the database, so a Redis outage does not lift the limit.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_LOCKOUT_CALLABLE = "config.throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.throttle.client_ip"
AXES_HANDLER = "config.throttle.LoginAttempts"
AXES_DISABLE_ACCESS_LOG = True  # no row per successful sign-in (crowd links sign many in)
AXES_SENSITIVE_PARAMETERS = ["password", "csrfmiddlewaretoken"]
# Crowd links opened per minute from one address (0: no limit), and addresses never counted:
# loopback, since behind a proxy that does not pass the client's address everyone shares it.
CROWD_ENTRY_PER_MINUTE = env.int("CROWD_ENTRY_PER_MINUTE", default=30)
THROTTLE_EXEMPT_ADDRESSES = env.list("THROTTLE_EXEMPT_ADDRESSES", default=["127.0.0.1", "::1"])
# Behind n reverse proxies that append to X-Forwarded-For, the client's address is n from its right.
TRUSTED_PROXY_HOPS = env.int("TRUSTED_PROXY_HOPS", default=0)

# Crowd platforms: where a worker goes back to with their completion code.
PROLIFIC_COMPLETION_URL = env(
    "PROLIFIC_COMPLETION_URL", default="https://app.prolific.com/submissions/complete?cc={code}"
)

# Shared secret of the Prolific workspace; unset, the webhook endpoint refuses every call.
PROLIFIC_WEBHOOK_SECRET = env("PROLIFIC_WEBHOOK_SECRET", default="")
# Prolific's REST API (crowd/prolific.py): the researcher's API token (unset: nothing talks to Prolific)
# and where the API is (a loopback fake in tests).
PROLIFIC_API_TOKEN = env("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_URL = env("PROLIFIC_API_URL", default="https://api.prolific.com/api/v1/")

# Model endpoints (modeleval/clients/secrets.py): the environment variables a model's config.api_key_env may
# name (besides any HYPOLAB_MODEL_KEY_*), and the hosts its endpoint may be on besides loopback (empty:
# loopback only).
MODEL_API_KEYS = env.list("MODEL_API_KEYS", default=[])
MODEL_ENDPOINT_ALLOW = env.list("MODEL_ENDPOINT_ALLOW", default=[])

# The Hugging Face Hub `push_release` uploads to (a loopback fake in tests); the token is HF_TOKEN.
HF_ENDPOINT = env("HF_ENDPOINT", default="https://huggingface.co").rstrip("/")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}

# Serve app static folders directly (no collectstatic step needed for the demo or tests).
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every request when the folder is missing

# Hypo3D runs store SBERT when scored (modeleval.analysis.secondary_metrics); SCORE_SBERT=0 skips it (the test
# suite, where loading the sentence model in each process would dominate the timings it measures).
SCORE_SBERT = os.environ.get("SCORE_SBERT", "1") != "0"
