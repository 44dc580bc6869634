import type { SMTPServer } from 'smtp-server';

// AUTH is never offered before TLS. smtp-server lists `AUTH PLAIN LOGIN` in every EHLO reply of a
// session not yet logged in, also before STARTTLS (it only refuses the command itself until TLS,
// with a non-standard 538). On the STARTTLS port the AUTH line is taken out of the EHLO reply of a
// cleartext session, so a client never sends the key it holds in the clear, and an early AUTH
// hears RFC 3207's 530 5.7.0 instead. The wrapper sits on smtp-server's one reply method (the same
// hook the inbound listener's command guard uses).

/** The parts of smtp-server's connection object the wrapper uses (public in its typings). */
interface Connection {
  secure: boolean;
  send(code: number, data?: string | string[] | null, context?: string | false): void;
}

/** Applies to every connection the server makes from now on. */
export function offerAuthOnlyOverTls(server: SMTPServer): void {
  const connections = server.connections as unknown as Set<Connection>;
  const add = connections.add.bind(connections);
  // smtp-server adds each new connection to this set before it reads anything from the socket.
  connections.add = (connection: Connection) => {
    const send = connection.send.bind(connection);
    connection.send = (code, data, context) => {
      if (code === 250 && Array.isArray(data) && !connection.secure) return send(code, data.filter((line) => !/^AUTH\b/i.test(line)), context);
      if (code === 538) return send(530, '5.7.0 Must issue a STARTTLS command first', false);
      if (code === 235) return send(235, '2.7.0 Authentication successful', false);
      return send(code, data, context);
    };
    return add(connection);
  };
}
