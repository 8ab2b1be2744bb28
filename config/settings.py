"""Settings for RL Data Atlas, read from the environment.

Defaults give the embedded development shape: SQLite under ``var/`` and Celery tasks run in-process.
Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis), SECRET_KEY and DEBUG=0.
"""

import ipaddress
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name)
    if not raw:
        return default
    path = Path(raw)
    return path if path.is_absolute() else BASE_DIR / path


# The embedded shape (no DATABASE_URL) is a developer's machine: debug on by default. With a
# DATABASE_URL the production shape is assumed: debug off and a real SECRET_KEY required.
DEBUG = env_bool("DEBUG", not os.environ.get("DATABASE_URL"))
_DEV_SECRET = "dev-only-insecure-key-for-local-use-never-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY") or (_DEV_SECRET if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set when DEBUG is off (DEBUG defaults to off when DATABASE_URL is set)"
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "atlas",
    "reviews",
    "difficulty",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "atlas.web.middleware.ContentSecurityPolicyMiddleware",
    # A database or broker that is down: 503 with Retry-After, a dropped read retried once.
    "atlas.web.unavailable.UnavailablePartsMiddleware",
    "atlas.web.middleware.UrlLengthMiddleware",
    "atlas.web.middleware.UnstorableInputMiddleware",
    "atlas.web.middleware.MethodNotAllowedFirstMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: locks out repeated failed sign-ins (admin, login page, API tokens).
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "1"))  # hours
# Per account and address: one person's typos never lock out a colleague behind the same NAT.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no banner on every command's stderr
AXES_LOCKOUT_CALLABLE = "atlas.api.authentication.lockout_response"
# The client address failures count against: X-Forwarded-For only from these proxies (addresses
# or networks, comma-separated), else the connection's own address (atlas/web/client_address.py).
ATLAS_TRUSTED_PROXIES = env_list("ATLAS_TRUSTED_PROXIES", [])
try:
    for _proxy in ATLAS_TRUSTED_PROXIES:
        ipaddress.ip_network(_proxy, strict=False)
except ValueError as exc:
    raise ImproperlyConfigured(f"ATLAS_TRUSTED_PROXIES: {exc}") from None
AXES_CLIENT_IP_CALLABLE = "atlas.web.client_address.client_address"

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_default_sqlite = BASE_DIR / "var" / "atlas.sqlite3"
_database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{_default_sqlite}"
_server_database = not _database_url.startswith("sqlite")
DATABASES = {
    "default": dj_database_url.parse(
        _database_url,
        # Persistent connections with a health check: opening a PostgreSQL connection per request
        # cost 1.3–1.6× on the list endpoints.
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "600" if _server_database else "0")),
        conn_health_checks=_server_database,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # Write-ahead log, synced at checkpoints rather than at every commit (durable across a crash of
    # the process, not of the machine: the embedded default, not production's PostgreSQL). A fresh
    # `make run` migrates in ~70 commits, and waiting for the disk at each was a second of its
    # start; readers also no longer wait for a writer (pages during an in-process sync).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- security (production shape: DEBUG=0) ---
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the page script reads the CSRF token for curator syncs
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- REST framework ---
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: a write without credentials (or with a wrong token) answers 401 with
        # ``WWW-Authenticate: Token`` (DRF asks the first authenticator for that header; a session
        # has none, so with it first the API answered 403); signed in without the permission, 403.
        "atlas.api.authentication.LockingTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "atlas.api.schema.AtlasAutoSchema",
    "EXCEPTION_HANDLER": "atlas.api.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "atlas.api.renderers.FastJSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "RL Data Atlas API",
    "DESCRIPTION": "Sources, refreshes, reviews, verifier issues and difficulty of RL Data Atlas.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A deep link is an anchor inside each operation's toggle button: a link nested in a button,
    # which keyboards and screen readers cannot use (axe: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "atlas.api.schema.catalog_vocabulary_enums",
        "atlas.api.schema.empty_means_unset",
        "atlas.api.schema.catalog_page_endpoints",
        "atlas.api.schema.storable_text_parameters",
    ],
}

# --- Celery: without a broker, tasks run in-process ---
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task is killed well before Redis would redeliver it (visibility timeout), and the publication
# lease outlives the hard limit, so a job is never run twice at once nor left "running" forever.
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "1500"))
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "1800"))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * CELERY_TASK_TIME_LIMIT}
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://"

# --- RL Data Atlas ---
ATLAS_CATALOG_PATH = env_path("ATLAS_CATALOG_PATH", BASE_DIR / "dist" / "catalog.json")
ATLAS_DEFINITIONS_DIR = env_path("ATLAS_DEFINITIONS_DIR", BASE_DIR / "fixtures" / "sources")
ATLAS_SYNC_SCHEDULE = os.environ.get("ATLAS_SYNC_SCHEDULE", "")
ATLAS_PUBLIC_URL = os.environ.get("ATLAS_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# Whether the links the commands print name the server's address or the default guess
# (``make run``/``make serve`` set it from HOST and PORT; a command run by hand may not).
ATLAS_PUBLIC_URL_SET = bool(os.environ.get("ATLAS_PUBLIC_URL"))
ATLAS_SYNC_LOCK_DIR = env_path("ATLAS_SYNC_LOCK_DIR", BASE_DIR / "var")
ATLAS_SCRATCH_DIR = env_path("ATLAS_SCRATCH_DIR", BASE_DIR / "var" / "scratch")
ATLAS_PUBLICATION_LEASE_SECONDS = int(
    os.environ.get("ATLAS_PUBLICATION_LEASE_SECONDS", str(CELERY_TASK_TIME_LIMIT + 300))
)
ATLAS_UNRATED_JUDGE_MODELS = env_list(
    "ATLAS_UNRATED_JUDGE_MODELS", ["model:Qwen/Qwen3-Coder-30B-A3B-Instruct"]
)
ATLAS_MAX_PUBLICATION_BYTES = int(os.environ.get("ATLAS_MAX_PUBLICATION_BYTES", str(512 * 2**20)))
ATLAS_MAX_ARTIFACT_BYTES = int(os.environ.get("ATLAS_MAX_ARTIFACT_BYTES", str(16 * 2**20)))
ATLAS_DIFFICULTY_PROTOCOLS = env_path(
    "ATLAS_DIFFICULTY_PROTOCOLS", BASE_DIR / "difficulty" / "protocols.toml"
)
ATLAS_MAX_EXTRACTED_BYTES = int(os.environ.get("ATLAS_MAX_EXTRACTED_BYTES", str(2 * 2**30)))
ATLAS_MAX_ARCHIVE_ENTRIES = int(os.environ.get("ATLAS_MAX_ARCHIVE_ENTRIES", "50000"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # One line per HTTP request at INFO would bury what the curators' tools print (fetch_review
    # reads every artifact of a review over HTTP); their failures still reach the root.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# Jobs whose worker died are requeued or failed within ten minutes (reviews.services.jobs).
CELERY_BEAT_SCHEDULE = {
    "reviews-expire-stale-publications": {
        "task": "reviews.tasks.expire_stale_publications",
        "schedule": 600.0,
    }
}
if ATLAS_SYNC_SCHEDULE:
    from celery.schedules import crontab

    try:
        _schedule = crontab.from_string(ATLAS_SYNC_SCHEDULE)
    except (ValueError, TypeError) as exc:
        raise ImproperlyConfigured(
            f"ATLAS_SYNC_SCHEDULE must be a five-field cron expression: {exc}"
        ) from None
    CELERY_BEAT_SCHEDULE["atlas-scheduled-sync"] = {
        "task": "atlas.tasks.sync_catalog",
        "schedule": _schedule,
        "kwargs": {"force": False, "trigger": "schedule"},
    }
