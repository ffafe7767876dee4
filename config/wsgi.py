import os

from django.core.wsgi import get_wsgi_application
from django.urls import reverse

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# Import every view and index the URL names now, not in the first request each worker serves
# (about 0.3 s, with the requests behind it waiting).
reverse("home")
