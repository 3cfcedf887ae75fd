package io.flotilla.cluster.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(RedisServerExtension.class)
class RedisServerTest {

    @Test
    void answersOnLoopbackAndKeepsNothingOnDisk(RedisServer redis) {
        assertThat(redis.command("PING")).isEqualTo("+PONG");
        assertThat(redis.command("SET", "redis-server-test:k", "v")).isEqualTo("+OK");
        assertThat(redis.command("CONFIG", "GET", "bind")).startsWith("*2");
        assertThat(redis.command("EXISTS", "redis-server-test:k")).isEqualTo(":1");
        assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
    }

    @Test
    void closeStopsTheProcessAndAStoppedServerStartsAgainOnItsPort(@TempDir Path dir) {
        RedisServer.Config config = new RedisServer.Config(dir, 0, true, "16mb", Duration.ofSeconds(20));
        RedisServer redis = new RedisServer(config).start();
        long pid = redis.pid();
        assertThat(redis.isRunning()).isTrue();
        redis.close();
        assertThat(redis.isRunning()).isFalse();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();

        redis.start(); // the port is kept: clients reconnect to the same address
        assertThat(redis.command("PING")).isEqualTo("+PONG");
        redis.closeAndDelete();
        assertThat(dir).doesNotExist();
    }
}
