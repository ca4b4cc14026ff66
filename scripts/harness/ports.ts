/** TCP ports for listeners that must be told their port in advance (scripts and tests). */
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
