// A TCP proxy on loopback in front of an apiserver, for partition tests: TLS passes through untouched (the
// client still verifies the apiserver's certificate, which names 127.0.0.1). freeze() makes it a hung
// link: connections stay open and new ones are accepted, but no byte goes either way, so a client sees
// neither an answer nor an error until its own timeout. close() ends everything.

import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export class PausableProxy {
  private readonly server: Server;
  private readonly target: URL;
  private readonly sockets = new Set<Socket>();
  private frozenFlag = false;
  private port = 0;

  private constructor(target: string) {
    this.target = new URL(target);
    this.server = createServer((client) => this.accept(client));
  }

  /** Listens on 127.0.0.1 (a free port) and forwards to `target` (https://127.0.0.1:PORT). */
  static async start(target: string): Promise<PausableProxy> {
    const p = new PausableProxy(target);
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    p.port = (p.server.address() as AddressInfo).port;
    return p;
  }

  /** https://127.0.0.1:PORT of the proxy. */
  get url(): string {
    return `${this.target.protocol}//127.0.0.1:${this.port}`;
  }

  get frozen(): boolean {
    return this.frozenFlag;
  }

  /** From now on nothing is forwarded, on open connections and new ones alike. */
  freeze(): void {
    this.frozenFlag = true;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    const upstream = connect({ host: this.target.hostname.replace(/^\[|\]$/g, ''), port: Number(this.target.port) });
    this.sockets.add(upstream);
    // What arrives while frozen is dropped: a hung link delivers nothing, then or later.
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (!this.frozenFlag && !to.destroyed) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    // A frozen link does not carry a close either: the other side just stops hearing anything.
    for (const s of [client, upstream]) {
      s.on('error', () => (this.frozenFlag ? undefined : end()));
      s.on('close', () => (this.frozenFlag ? undefined : end()));
    }
  }
}
