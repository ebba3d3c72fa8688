/**
 * @module services/workspace
 * The `workspace` contract (optional, not used by the loop): the directory a run works in. Tools that
 * read and write files, and a verifier that runs the project's tests, agree on it through this service
 * instead of each taking a path from its own config.
 */

export const WorkspaceContract = '1.0.0'

export interface WorkspaceService {
  /**
   * The run's working directory: an absolute path, created (and filled from a template, if the provider
   * has one) on first use. The same run gets the same directory in every process on this machine, so a
   * resumed run finds its files.
   */
  dir(runId: string): Promise<string>
}

declare module 'cordis' {
  interface Context {
    workspace: WorkspaceService
  }
}
