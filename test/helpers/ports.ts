/** Test helper: a TCP port for a listener that must be told its port in advance. */
import net from 'node:net';

/** A port nothing listens on at 127.0.0.1 right now (for a child process that cannot take port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
