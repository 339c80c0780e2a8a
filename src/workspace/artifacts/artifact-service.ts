import type { AppDeps } from '../../app/app-deps.js';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/http/errors.js';
import {
  findVersion,
  listVersions,
  writeVersion,
  type ArtifactVersion,
  type ArtifactVersionIdentity,
  type VersionInput,
} from './artifact-store.js';

/**
 * Agent understanding versions as the routes see them: route → this service → artifact-store. It
 * turns the store's write outcomes into answers: the new version, or the 400 / 409 that explain
 * why no version was written.
 */
export class ArtifactService {
  constructor(private readonly deps: AppDeps) {}

  async record(tenantId: string, projectId: string, input: VersionInput): Promise<ArtifactVersionIdentity> {
    const outcome = await writeVersion(this.deps.sql, tenantId, projectId, input);
    switch (outcome.kind) {
      case 'created':
        return outcome.version;
      case 'first_needs_both':
        throw new ValidationError(`The first version of agent '${input.agentName}' needs both files; missing: ${outcome.missing.join(', ')}`);
      case 'conflict':
        throw new ConflictError(
          `based_on_version ${input.basedOnVersion} is not the latest version of agent '${input.agentName}' (latest: ${outcome.latest})`,
          'version_conflict',
        );
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }

  list(tenantId: string, projectId: string, agentName: string | null): Promise<ArtifactVersionIdentity[]> {
    return listVersions(this.deps.sql, tenantId, projectId, agentName);
  }

  async get(tenantId: string, projectId: string, versionId: string): Promise<ArtifactVersion> {
    const version = await findVersion(this.deps.sql, tenantId, projectId, versionId);
    if (!version) throw new NotFoundError('Version not found');
    return version;
  }
}
