"""ASGI entry: HTTP through Django, websockets through Channels (jobs' progress, live dashboards)."""

import os

from django.core.asgi import get_asgi_application
from django.urls import reverse

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()
reverse("home")  # imports every view now, as config/wsgi.py does

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from annotation.routing import websocket_urlpatterns as annotation_websockets  # noqa: E402
from core.routing import websocket_urlpatterns as core_websockets  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(core_websockets + annotation_websockets))),
    }
)
