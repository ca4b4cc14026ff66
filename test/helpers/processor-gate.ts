/**
 * The processor gate: a TCP proxy in front of stripe-mock (or of a proxy in front of it). The API
 * and the worker reach the payment processor only through it (PAYPROC_API_BASE points here), so a
 * suite can make the processor hang without touching the product. The fault stack
 * (test/resilience) puts it on a fixed port; the model-based suite (test/model) on any free one.
 *
 * - open (the default): bytes pass both ways. A connection stripe-mock refuses (it is stopped)
 *   is reset.
 * - `hang()`: the processor accepts connections and never answers. Nothing reaches the client on
 *   open or new connections and none is closed by the gate until `open()`: what either side sent
 *   meanwhile is held, and new connections are not opened to stripe-mock yet. `open()` delivers
 *   the held bytes (to whichever side is still there) and forwards normally again. A client that
 *   gives up (its own timeout) closes its connection; the gate then closes the stripe-mock side.
 *
 * Unlike test/helpers/tcp-proxy.ts (down = reset) it can hang, and it may listen on a fixed port
 * (a stack whose environment names it before anything starts; port 0 takes a free one). It runs
 * in the test process, which is never faulted.
 *
 * It also keeps the processor's record: every HTTP request whose bytes it wrote to stripe-mock
 * (method, path, Idempotency-Key, form body), at the moment its last byte went out. A request
 * refused (stripe-mock stopped) or held by a hang whose client gave up never reached the
 * processor and is not in it; one held and delivered when the gate opens is, at that moment.
 * stripe-mock keeps no state (it answers with fixture ids and ignores idempotency keys), so this
 * record is how a suite counts what the processor was asked to create.
 */
import net from 'node:net';

/** An HTTP request that reached stripe-mock through the gate. */
export interface ProcessorRequest {
  method: string;
  /** Without the query string. */
  path: string;
  idempotencyKey: string | null;
  /** The request body as sent (form-encoded for the processor's writes). */
  body: string;
  /** When its last byte was written to stripe-mock (epoch ms). */
  at: number;
}

/**
 * Splits one connection's client-to-processor bytes into HTTP/1.1 requests (Content-Length
 * bodies: the processor's client always sends one). A chunked body stops the parsing of that
 * connection and counts as unparsed, so a record is never silently short.
 */
class RequestSniffer {
  private buffered: Buffer = Buffer.alloc(0);
  private broken = false;

  constructor(
    private readonly onRequest: (r: ProcessorRequest) => void,
    private readonly onUnparsed: () => void,
  ) {}

  feed(chunk: Buffer): void {
    if (this.broken) return;
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const headEnd = this.buffered.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const [requestLine = '', ...lines] = this.buffered.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers.get('content-length') ?? 0);
      if (headers.has('transfer-encoding') || !Number.isInteger(length) || length < 0) {
        this.broken = true;
        this.onUnparsed();
        return;
      }
      if (this.buffered.length < headEnd + 4 + length) return;
      const body = this.buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      this.buffered = this.buffered.subarray(headEnd + 4 + length);
      const [method = '', target = ''] = requestLine.split(' ');
      this.onRequest({ method, path: target.split('?')[0]!, idempotencyKey: headers.get('idempotency-key') ?? null, body, at: Date.now() });
    }
  }
}

export interface ProcessorGate {
  /** `http://host:port` of the gate (PAYPROC_API_BASE of the API and worker). */
  url: string;
  /** From now on no byte reaches either side and the gate closes no connection. */
  hang(): void;
  /** Delivers what a hang held back and forwards from now on. */
  open(): void;
  /** Connections open or opened while the gate hung (each held without an answer). */
  readonly held: number;
  /** Connections their client closed while the gate held bytes it had sent: the client gave up waiting (its timeout). */
  readonly abandoned: number;
  /** Every request that reached stripe-mock through the gate, in the order their last bytes went out. */
  readonly requests: readonly ProcessorRequest[];
  /** Connections whose requests could not be parsed (a chunked body): their requests are not in `requests`. */
  readonly unparsed: number;
  close(): Promise<void>;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket | null;
  connected: boolean;
  upstreamClosed: boolean;
  /** Client bytes not yet written to stripe-mock, and stripe-mock bytes not yet to the client. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  /** Reads the requests out of what is written to stripe-mock. */
  sniffer: RequestSniffer;
}

/**
 * Listens on `host:port` (0: a free port, named by `url`) and forwards to `target`.
 * @throws {Error} when the port is taken.
 */
export async function startProcessorGate(o: {
  host: string;
  port: number;
  target: { host: string; port: number };
}): Promise<ProcessorGate> {
  let hanging = false;
  let held = 0;
  let abandoned = 0;
  let unparsed = 0;
  const links = new Set<Link>();
  const requests: ProcessorRequest[] = [];

  /** Writes client bytes to stripe-mock, noting each request once its last byte is out. */
  const toProcessor = (link: Link, chunk: Buffer) => {
    link.upstream!.write(chunk);
    link.sniffer.feed(chunk);
  };

  /** Writes what was held, both ways; ends the client once stripe-mock has closed its side. */
  const flush = (link: Link) => {
    if (link.upstream && link.connected && !link.upstreamClosed) for (const chunk of link.toUpstream.splice(0)) toProcessor(link, chunk);
    for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
    if (link.upstreamClosed) {
      links.delete(link);
      link.client.end();
    }
  };

  const connectUpstream = (link: Link) => {
    const upstream = net.connect(o.target.port, o.target.host);
    link.upstream = upstream;
    upstream.setNoDelay(true);
    upstream.once('connect', () => {
      link.connected = true;
      if (!hanging) flush(link);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (hanging) link.toClient.push(chunk);
      else link.client.write(chunk);
    });
    upstream.on('error', () => {}); // 'close' follows
    upstream.on('close', () => {
      if (link.upstream !== upstream) return;
      if (!link.connected) {
        // stripe-mock refused the connection
        if (hanging) {
          link.upstream = null; // tried again when the gate opens
          return;
        }
        links.delete(link);
        link.client.resetAndDestroy();
        return;
      }
      link.upstreamClosed = true;
      if (!hanging) flush(link);
    });
  };

  const server = net.createServer((client) => {
    const link: Link = {
      client,
      upstream: null,
      connected: false,
      upstreamClosed: false,
      toUpstream: [],
      toClient: [],
      sniffer: new RequestSniffer(
        (r) => requests.push(r),
        () => unparsed++,
      ),
    };
    links.add(link);
    if (hanging) held++;
    client.setNoDelay(true);
    client.on('data', (chunk: Buffer) => {
      if (!hanging && link.connected && link.upstream && !link.upstreamClosed) toProcessor(link, chunk);
      else link.toUpstream.push(chunk);
    });
    client.on('error', () => {}); // 'close' follows
    client.on('close', () => {
      if (link.toUpstream.length > 0) abandoned++;
      links.delete(link);
      link.upstream?.destroy();
    });
    if (!hanging) connectUpstream(link);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    url: `http://${o.host}:${(server.address() as net.AddressInfo).port}`,
    hang() {
      if (hanging) return;
      hanging = true;
      held += links.size;
    },
    open() {
      hanging = false;
      for (const link of [...links]) {
        if (!link.upstream) connectUpstream(link);
        else if (link.connected) flush(link);
      }
    },
    get held() {
      return held;
    },
    get abandoned() {
      return abandoned;
    },
    requests,
    get unparsed() {
      return unparsed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) {
          link.client.destroy();
          link.upstream?.destroy();
        }
        links.clear();
        server.close(() => resolve());
      }),
  };
}
