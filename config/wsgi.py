import os

from django.core.wsgi import get_wsgi_application

from atlas.db.gc_pause import settle_loaded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# What is loaded by now lives as long as the process: see atlas.db.gc_pause.settle_loaded.
settle_loaded()
