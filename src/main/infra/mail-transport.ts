/**
 * Sending mail over SMTP (nodemailer). The mail service decides what to send
 * and when; this only talks to the server, with timeouts, TLS required unless
 * turned off, and no file or URL access from message content.
 */
import nodemailer from 'nodemailer'

/** SMTP settings and the base URL of links in mail. Without `host`, mail stays in the outbox. */
export interface MailConfig {
  host?: string
  /** Default 465 with `secure`, else 587. */
  port?: number
  /** TLS from the first byte (SMTPS, usually port 465). */
  secure?: boolean
  /**
   * Without `secure`: refuse to send unless the server upgrades the connection
   * with STARTTLS (the default), or, when false, send in the clear to a server
   * that does not offer it. Mail carries one-time links; plain text is an opt-in.
   */
  requireTLS?: boolean
  user?: string
  password?: string
  /** The From header, e.g. `Tessera <vault@example.com>`. */
  from?: string
  /** Base URL of links in mail; by default the service's own URL. */
  publicBaseUrl?: string
  /**
   * How long one send may take in all (connect, greeting, every reply) before its
   * connection is dropped and the attempt fails as `SMTP_TIMEOUT`; 60 s by default.
   */
  sendTimeoutMs?: number
  /** On shutdown (and the desktop's Lock), how long a send in flight may still finish before it is dropped; 2 s by default. */
  closeGraceMs?: number
}

/** One message to send. */
export interface OutgoingMessage {
  from: string
  to: string
  subject: string
  text: string
  html: string
}

/** An SMTP connection to send through. */
export interface MailTransport {
  /** Sends `message`; aborting `signal` closes the connection and rejects. */
  send(message: OutgoingMessage, signal?: AbortSignal): Promise<void>
  close(): void
}

/** The transport `config` describes; undefined without a host (mail then waits in the outbox). */
export function createMailTransport(config: MailConfig): MailTransport | undefined {
  if (!config.host) return undefined
  const transporter = nodemailer.createTransport({
    host: config.host,
    port: config.port ?? (config.secure ? 465 : 587),
    secure: config.secure ?? false,
    requireTLS: !config.secure && config.requireTLS !== false,
    auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true
  })
  return {
    send: async (message, signal) => {
      // nodemailer honours `signal` (closes the connection) though its type declarations lack it.
      const options: OutgoingMessage & { signal?: AbortSignal } = { ...message, signal }
      await transporter.sendMail(options)
    },
    close: () => transporter.close()
  }
}
