from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.contrib.auth import get_user_model
        from django.db.backends.signals import connection_created
        from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save

        import core.sql  # noqa: F401  registers the `holds` JSON lookup on both databases
        from core.auth import forget_cached_user, forget_users_whose_groups_changed
        from core.history import register_sqlite_actor, reinstall_sqlite_triggers

        # Connected at start-up in every process, so a change made anywhere drops the cached user.
        user_model = get_user_model()
        post_save.connect(forget_cached_user, sender=user_model, dispatch_uid="forget_cached_user")
        post_delete.connect(forget_cached_user, sender=user_model, dispatch_uid="forget_deleted_user")
        m2m_changed.connect(forget_users_whose_groups_changed, sender=user_model.groups.through,
                            dispatch_uid="forget_users_whose_groups_changed")
        connection_created.connect(register_sqlite_actor, dispatch_uid="register_sqlite_actor")
        post_migrate.connect(reinstall_sqlite_triggers, sender=self, dispatch_uid="reinstall_sqlite_triggers")
