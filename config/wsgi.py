import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import reverse

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# Import every view and index the URL names now, not in the first request each worker serves
# (about 0.3 s, with the requests behind it waiting).
reverse("home")
# Everything loaded so far lives as long as the process: the collector skips it from now on. Under
# gunicorn --preload this runs before the fork, so a worker's full collection scans only what it made
# itself (it took 200-370 ms, all of the worker's threads stopped, with the whole app in the scan;
# docs/PERFORMANCE.md) and never writes to the pages it shares with the others.
gc.collect()
gc.freeze()
