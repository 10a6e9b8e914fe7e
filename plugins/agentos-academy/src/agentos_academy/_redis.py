"""Academy's Redis exchange, except that a malformed message costs one log line, not the agent."""

from __future__ import annotations

import logging

from academy.exchange.redis import RedisExchangeFactory, RedisExchangeTransport
from academy.message import check_version

log = logging.getLogger("agentos_academy")


class SafeRedisExchangeTransport(RedisExchangeTransport):
    """Academy's Redis transport; a message that does not parse (or whose body does not) is dropped
    with one log line, and the mailbox goes on with the next one (Academy's would end the agent)."""

    async def _recv(self, timeout: float | None = None):
        while True:
            try:
                message = await super()._recv(timeout)
                if check_version(message.protocol_version):  # Academy answers other versions itself
                    message.get_body()  # validated here, where a failure costs one message
                return message
            except ValueError as exc:  # pydantic's ValidationError, UnicodeDecodeError, bad JSON
                text = str(exc).strip().splitlines()
                log.warning("agentos-academy: dropped a malformed message for %s: %s%s", self.mailbox_id,
                            type(exc).__name__, f": {text[0][:200]}" if text else "")

    def factory(self) -> SafeRedisExchangeFactory:
        info = self._redis_info
        return SafeRedisExchangeFactory(info.hostname, info.port, **info.kwargs)


class SafeRedisExchangeFactory(RedisExchangeFactory):
    """Makes :class:`SafeRedisExchangeTransport` s (picklable, for process pools and Dask workers)."""

    async def _create_transport(self, mailbox_id=None, *, name=None, registration=None):
        return await SafeRedisExchangeTransport.new(mailbox_id=mailbox_id, name=name, redis_info=self.redis_info)
