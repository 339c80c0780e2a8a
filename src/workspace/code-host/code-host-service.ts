import type { AppDeps } from '../../app/app-deps.js';
import { ConflictError } from '../../platform/http/errors.js';
import { checkAccount, checkRepository, type CheckResult } from './code-host-client.js';
import { findConnection, saveConnection, toView, type CodeHostChange, type CodeHostRow, type CodeHostView } from './code-host-store.js';
import { TokenSeal } from './token-seal.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    codeHost?: CodeHostService;
  }
}

/**
 * The code-host operations behind the routes. Nothing here deletes history: disconnect, unbind and
 * disabling the feature change states and timestamps but keep the last-known account and repository
 * (stored history is retained when the feature is disabled).
 */
export class CodeHostService {
  private seal: TokenSeal | null = null;

  constructor(private readonly deps: AppDeps) {}

  private sealer(): TokenSeal {
    return (this.seal ??= TokenSeal.fromConfig(this.deps.config.secretKey, this.deps.config.dataDir));
  }

  private get apiUrl(): string {
    return this.deps.config.codeHostApiUrl;
  }

  private view(projectId: string, row: CodeHostRow | null): CodeHostView {
    return toView(projectId, row, this.apiUrl);
  }

  async get(tenantId: string, projectId: string): Promise<CodeHostView> {
    return this.view(projectId, await findConnection(this.deps.sql, tenantId, projectId));
  }

  async setFeature(tenantId: string, projectId: string, enabled: boolean): Promise<CodeHostView> {
    return this.view(projectId, await saveConnection(this.deps.sql, tenantId, projectId, { feature_enabled: enabled }));
  }

  private failure(result: { code: string; message: string }, now: Date): CodeHostChange {
    return { last_error_code: result.code, last_error_message: result.message, last_error_at: now };
  }

  /** Stores the token (sealed) and checks it: `connected` when the code host accepts it, `error` otherwise. */
  async connect(tenantId: string, projectId: string, token: string): Promise<CodeHostView> {
    const now = new Date();
    const account = await checkAccount(this.apiUrl, token);
    const change: CodeHostChange = {
      token_sealed: this.sealer().seal(token),
      connected_at: now,
      last_checked_at: now,
      ...(account.ok
        ? { status: 'connected', account_login: account.value.login, account_html_url: account.value.html_url }
        : { status: 'error', ...this.failure(account, now) }),
    };
    const row = await saveConnection(this.deps.sql, tenantId, projectId, change);
    // A bound repository is re-checked with the new token so the binding status is current.
    if (account.ok && row.repository_owner && row.repository_name && row.binding_status !== 'unbound') {
      return this.view(projectId, await this.checkBinding(tenantId, projectId, token, row.repository_owner, row.repository_name));
    }
    return this.view(projectId, row);
  }

  /** Forgets the token; the account identity and error history stay. */
  async disconnect(tenantId: string, projectId: string): Promise<CodeHostView> {
    const existing = await findConnection(this.deps.sql, tenantId, projectId);
    if (!existing || existing.status === 'not_connected' || existing.status === 'disconnected') return this.view(projectId, existing);
    return this.view(projectId, await saveConnection(this.deps.sql, tenantId, projectId, { status: 'disconnected', token_sealed: null, disconnected_at: new Date() }));
  }

  private tokenOf(row: CodeHostRow | null): string | null {
    if (!row?.token_sealed || (row.status !== 'connected' && row.status !== 'error')) return null;
    return this.sealer().open(row.token_sealed);
  }

  /** Binds a repository: needs a connection (409 otherwise); the repository check sets active or error. */
  async bind(tenantId: string, projectId: string, owner: string, name: string): Promise<CodeHostView> {
    const row = await findConnection(this.deps.sql, tenantId, projectId);
    if (!row || (row.status !== 'connected' && row.status !== 'error')) {
      throw new ConflictError('Connect the code host before binding a repository');
    }
    const token = this.tokenOf(row);
    if (token === null) {
      const now = new Date();
      const saved = await saveConnection(this.deps.sql, tenantId, projectId, {
        status: 'error', binding_status: 'error', repository_owner: owner, repository_name: name, repository_html_url: null,
        bound_at: now, unbound_at: null, last_checked_at: now,
        ...this.failure({ code: 'token_unavailable', message: 'The stored token cannot be read; connect again' }, now),
      });
      return this.view(projectId, saved);
    }
    return this.view(projectId, await this.checkBinding(tenantId, projectId, token, owner, name, true));
  }

  private async checkBinding(tenantId: string, projectId: string, token: string, owner: string, name: string, rebind = false): Promise<CodeHostRow> {
    const now = new Date();
    const repo: CheckResult<{ owner: string; name: string; html_url: string | null }> = await checkRepository(this.apiUrl, token, owner, name);
    const change: CodeHostChange = {
      last_checked_at: now,
      ...(rebind ? { bound_at: now, unbound_at: null } : {}),
      ...(repo.ok
        ? { binding_status: 'active', repository_owner: repo.value.owner, repository_name: repo.value.name, repository_html_url: repo.value.html_url }
        : { binding_status: 'error', repository_owner: owner, repository_name: name, ...(rebind ? { repository_html_url: null } : {}), ...this.failure(repo, now) }),
    };
    return saveConnection(this.deps.sql, tenantId, projectId, change);
  }

  /** Marks the binding unbound and keeps the last-known repository identity. */
  async unbind(tenantId: string, projectId: string): Promise<CodeHostView> {
    const row = await findConnection(this.deps.sql, tenantId, projectId);
    if (!row || row.binding_status === 'none' || row.binding_status === 'unbound') return this.view(projectId, row);
    return this.view(projectId, await saveConnection(this.deps.sql, tenantId, projectId, { binding_status: 'unbound', unbound_at: new Date() }));
  }

  /**
   * The health check: the account, then the bound repository. A pass restores `connected`/`active`;
   * a failure sets `error` with last_error_code and last_error_at (kept after a later recovery, as
   * the time of the last error).
   */
  async check(tenantId: string, projectId: string): Promise<CodeHostView> {
    const row = await findConnection(this.deps.sql, tenantId, projectId);
    if (!row || (row.status !== 'connected' && row.status !== 'error')) throw new ConflictError('There is no code-host connection to check');
    const now = new Date();
    const token = this.tokenOf(row);
    if (token === null) {
      const failed = { code: 'token_unavailable', message: 'The stored token cannot be read; connect again' };
      return this.view(projectId, await saveConnection(this.deps.sql, tenantId, projectId, { status: 'error', last_checked_at: now, ...this.failure(failed, now) }));
    }
    const account = await checkAccount(this.apiUrl, token);
    const saved = await saveConnection(this.deps.sql, tenantId, projectId, {
      last_checked_at: now,
      ...(account.ok
        ? { status: 'connected', account_login: account.value.login, account_html_url: account.value.html_url }
        : { status: 'error', ...this.failure(account, now) }),
    });
    if (account.ok && saved.repository_owner && saved.repository_name && (saved.binding_status === 'active' || saved.binding_status === 'error')) {
      return this.view(projectId, await this.checkBinding(tenantId, projectId, token, saved.repository_owner, saved.repository_name));
    }
    return this.view(projectId, saved);
  }
}

export function codeHostService(deps: AppDeps): CodeHostService {
  return (deps.services.codeHost ??= new CodeHostService(deps));
}
