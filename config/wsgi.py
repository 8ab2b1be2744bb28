import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# What is loaded by now (Django, the apps, their modules) lives as long as the process. Frozen,
# the collector never walks it again, and under `gunicorn --preload` the workers keep sharing the
# master's pages instead of touching every object at their first full collection.
gc.freeze()
