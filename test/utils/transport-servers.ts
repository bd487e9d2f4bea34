/**
 * Applications on the transports beyond HTTP, with real clients: a gateway
 * (socket.io on Express, or `ws` on Fastify) and a TCP microservice, each on
 * a port the system picks, for the specs that run one scenario on each.
 */
import type { AddressInfo, Server } from 'node:net';
import type { INestApplication, INestMicroservice, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { WsAdapter } from '@nestjs/platform-ws';
import { Transport } from '@nestjs/microservices';
import { io, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';
import { TcpMessageClient } from './tcp-message-client.js';

export type GatewayAdapter = 'socket.io' | 'ws';

/** A gateway application listening on 127.0.0.1; its URL for the adapter's clients. */
export async function startGateway(
  adapter: GatewayAdapter,
  metadata: ModuleMetadata,
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    adapter === 'socket.io'
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  app.useWebSocketAdapter(adapter === 'socket.io' ? new IoAdapter(app) : new WsAdapter(app));
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, url: `${adapter === 'socket.io' ? 'http' : 'ws'}://127.0.0.1:${port}` };
}

/** A socket.io client, connected over WebSocket. */
export async function connectSocketIo(url: string): Promise<Socket> {
  const socket = io(url, { transports: ['websocket'], forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return socket;
}

/** A `ws` client, open. */
export async function connectWs(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** A TCP microservice on 127.0.0.1 and a client connected to it; `close()` ends both. */
export async function startTcpMicroservice(metadata: ModuleMetadata): Promise<{
  microservice: INestMicroservice;
  client: TcpMessageClient;
  close(): Promise<void>;
}> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const microservice = moduleRef.createNestMicroservice({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: 0 },
  });
  microservice.useLogger(false);
  await microservice.listen();
  const { port } = microservice.unwrap<Server>().address() as AddressInfo;
  const client = await TcpMessageClient.connect(port, '127.0.0.1');
  return {
    microservice,
    client,
    async close() {
      client.close();
      await microservice.close();
    },
  };
}
