"""Django's Redis cache with one client per connection pool. The stock backend builds a new
redis.Redis, with its table of response callbacks, on every call: on a request that only reads
its session from the cache that costs more than the round trip itself."""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _ClientReusingRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        # redis.Redis is safe to share between threads: each command takes a connection from the pool.
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ClientReusingRedisCacheClient
