import fs from 'node:fs';

/**
 * What the service asks of PostgreSQL, for the ingest benchmark (the `statsFiles.postgres` harness option): every
 * statement the service's pool sends, counted by kind, written on close. postgres.js reports each
 * statement it sends through its `debug` option — begin, commit and rollback included, so
 * transactions show as their own kinds. The service awaits its statements one at a time, so each
 * is one round trip to the server. The embedded server has no pg_stat_statements (it is not in
 * shared_preload_libraries), and counting here needs no server setting at all.
 */

/**
 * A statement's kind for the tally: its verb and the first table it names (`select issues`,
 * `insert issue_occurrences`), or the function a table-less select calls
 * (`select pg_try_advisory_xact_lock`); `locking` when it takes row locks (FOR UPDATE / SHARE).
 * A `with` statement that writes is named by its first write (`insert stored_traces` for an upsert
 * whose answer a final select joins back to its input), not by the select around it.
 */
export function postgresStatementKind(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim().toLowerCase();
  const write = sql.startsWith('with ') ? /(?<!\bfor |\bkey |\bdo )\b(insert into|update|delete from) (?!of\b|set\b)([a-z_][a-z0-9_.]*)/.exec(sql) : null;
  const locking = /\bfor (?:no key )?(?:update|share|key share)\b/.test(sql) ? ' locking' : '';
  if (write) return `${write[1].split(' ')[0]} ${write[2]}${locking}`;
  const verb = /^(?:with\b.*?\)\s*)?(select|insert|update|delete|begin|commit|rollback|savepoint|listen|unlisten|notify|set|show|create|alter|drop|lock|prepare)\b/.exec(sql)?.[1] ?? 'other';
  if (verb === 'begin' || verb === 'commit' || verb === 'rollback' || verb === 'savepoint') return verb;
  const named =
    verb === 'insert' ? /\binto ([a-z_][a-z0-9_.]*)/.exec(sql)
    : verb === 'update' ? /^(?:with\b.*?\)\s*)?update ([a-z_][a-z0-9_.]*)/.exec(sql)
    : /\b(?:from|join) (?!unnest\b)([a-z_][a-z0-9_.]*)/.exec(sql) ?? /^select (?:[a-z_][a-z0-9_]* )?([a-z_][a-z0-9_.]*)\(/.exec(sql);
  return `${verb} ${named?.[1] ?? '?'}${locking}`;
}

export interface PostgresStats {
  /** Statements by kind (postgresStatementKind). */
  kinds: Record<string, number>;
  statements: number;
  /** Transactions begun (each also counted as a `begin` statement). */
  transactions: number;
}

export class PostgresStatementStats {
  private readonly kinds = new Map<string, number>();

  constructor(private readonly file: string) {}

  /** The `debug` option of postgres.js: called once for every statement sent. */
  readonly count = (_connection: number, text: string): void => {
    const kind = postgresStatementKind(text);
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  };

  snapshot(): PostgresStats {
    let statements = 0;
    for (const n of this.kinds.values()) statements += n;
    return { kinds: Object.fromEntries(this.kinds), statements, transactions: this.kinds.get('begin') ?? 0 };
  }

  write(): void {
    fs.writeFileSync(this.file, JSON.stringify(this.snapshot()));
  }
}
