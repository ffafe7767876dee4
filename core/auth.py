"""Signed-in users come from the cache, with the names of their role groups. Every request of a
signed-in person loads their user row and most check a role, and with a crowd autosaving every few
seconds those reads were most of the database's work. A cached user is dropped whenever it is saved
or deleted (deactivated, password changed, signed in) or its groups change, so those take effect
at once; a bulk `QuerySet.update()` sends no signal and takes up to USER_CACHE_S."""

from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache

USER_CACHE_S = 300


def _cache_key(user_id) -> str:
    return f"auth-user:{user_id}"


class CachedModelBackend(ModelBackend):
    """ModelBackend (passwords, permissions, inactive users refused) whose per-request user look-up
    is served from the cache. The user carries `cached_role_names`, which roles.has_role reads."""

    def get_user(self, user_id):
        key = _cache_key(user_id)
        user = cache.get(key)
        if user is None:
            user = super().get_user(user_id)
            if user is not None:
                user.cached_role_names = frozenset(user.groups.values_list("name", flat=True))
                cache.set(key, user, USER_CACHE_S)
        return user


def remember_signed_in(user) -> None:
    """Cache a user this request just signed in (login() saved last_login, which dropped the cached
    copy), with the role names the request read or granted (`cached_role_names`): the first page after
    a crowd arrival then reads neither the user row nor its groups. Cached as get_user would (the row's
    fields, nothing the request hung on the object); a user without role names, or one get_user would
    refuse (inactive), is left to get_user."""
    names = getattr(user, "cached_role_names", None)
    if names is None or not CachedModelBackend().user_can_authenticate(user):
        return
    fields = [field.attname for field in user._meta.concrete_fields]
    row = type(user).from_db(user._state.db, fields, [getattr(user, name) for name in fields])
    row.cached_role_names = frozenset(names)
    cache.set(_cache_key(user.pk), row, USER_CACHE_S)


def forget_cached_user(sender, instance, **kwargs):
    cache.delete(_cache_key(instance.pk))


def forget_users_whose_groups_changed(sender, instance, action, reverse, pk_set, **kwargs):
    """m2m_changed on User.groups, from either side: user.groups.add(...) or group.user_set.add(...)."""
    if action == "pre_clear" and reverse:
        # The members are gone once the clear is done: drop them now (the clear follows at once).
        cache.delete_many([_cache_key(pk) for pk in instance.user_set.values_list("pk", flat=True)])
    elif action in ("post_add", "post_remove", "post_clear"):
        user_ids = (pk_set or ()) if reverse else (instance.pk,)
        cache.delete_many([_cache_key(pk) for pk in user_ids])
