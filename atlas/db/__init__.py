"""Database helpers: vendor SQL for migrations, lookups, set-based writes, locks, GC pauses."""
