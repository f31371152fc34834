/** A real SMTP server on 127.0.0.1 (the `smtp-server` package) that keeps what it receives, and a stalling one. */
import net, { type AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
}

export interface TestSmtpServer {
  port: number
  received: ReceivedMail[]
  close(): Promise<void>
}

/** Listens on `port` (0 picks a free one); plain SMTP, no authentication. */
export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8')
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export interface StallingSmtpServer {
  port: number
  /** Connections that sent a command (EHLO): a send is under way. */
  commandsSeen: number
  /** Connections the client closed. */
  closedByClient: number
  close(): Promise<void>
}

/**
 * A hostile SMTP server: greets, then answers the first command with a continuation line
 * (`250-still thinking`) every `intervalMs` and never a final line, so the client's
 * socket time-out never fires.
 */
export async function startStallingSmtpServer(port = 0, intervalMs = 50): Promise<StallingSmtpServer> {
  const sockets = new Set<net.Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.write('220 slow.example ESMTP\r\n')
    socket.once('data', () => {
      stalling.commandsSeen++
      const timer = setInterval(() => socket.destroyed || socket.write('250-still thinking\r\n'), intervalMs)
      timers.add(timer)
      socket.on('close', () => clearInterval(timer))
    })
    socket.on('close', () => {
      if (sockets.delete(socket)) stalling.closedByClient++
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const stalling: StallingSmtpServer = {
    port: (server.address() as AddressInfo).port,
    commandsSeen: 0,
    closedByClient: 0,
    close: () => {
      for (const timer of timers) clearInterval(timer)
      const open = [...sockets]
      sockets.clear()
      for (const socket of open) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  return stalling
}

/** A port that was free a moment ago: for a server that is "down" now and started later. */
export async function reservePort(): Promise<number> {
  const probe = await startSmtpServer()
  await probe.close()
  return probe.port
}

/** Undoes quoted-printable (soft line breaks and =XX escapes) so a link can be read from a raw message. */
export function decodeQuotedPrintable(text: string): string {
  return text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}
