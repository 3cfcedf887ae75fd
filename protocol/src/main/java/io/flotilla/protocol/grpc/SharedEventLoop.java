package io.flotilla.protocol.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One I/O thread for a gRPC server and the client channels its handlers call. A handler that calls
 * another service and answers from the callback (the router's Route asking the indexer) then never
 * crosses threads: the outgoing call is written, its answer read and the reply written all on the
 * thread that read the request. With separate event loops each of those steps is a hand-off that
 * wakes another thread — on a machine with more runnable threads than cores, a wait in the run queue
 * each time. Fits handlers that do microseconds of work per call; one thread carries them all.
 */
public final class SharedEventLoop implements AutoCloseable {

    private final EventLoopGroup group;
    private final boolean epoll;

    public SharedEventLoop(String name) {
        this.epoll = Epoll.isAvailable();
        DefaultThreadFactory threads = new DefaultThreadFactory(name, true);
        this.group = new MultiThreadIoEventLoopGroup(1, threads,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    /** Serves {@code builder}'s connections (and accepts them) on this loop. */
    public NettyServerBuilder serve(NettyServerBuilder builder) {
        return builder.bossEventLoopGroup(group).workerEventLoopGroup(group)
                .channelType(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class);
    }

    /** Runs {@code builder}'s channel on this loop. */
    public NettyChannelBuilder connect(NettyChannelBuilder builder) {
        return builder.eventLoopGroup(group).channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class);
    }

    /**
     * The loop's thread as an executor, for work that should run where the I/O happens (a task
     * submitted from the loop's own thread runs right after the current one, without waking anything).
     * Do not shut it down: {@link #close()} does.
     */
    public ScheduledExecutorService executor() {
        return group.next();
    }

    /** Stops the thread; servers and channels on it must be shut down first. */
    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
}
