// Names a process for good and tells whether another process so named has ended. Claims record
// their process (a forget's between its claim and its purge, a skill request's approval between
// its claim and its decision), so a sweep leaves a claim whose process still works on it and
// finishes one whose process stopped. The CLI's implementation is cli/process-ids.ts.
export interface ProcessIdentity {
  /** this process, as its claims record it */
  readonly id: string;
  /** true: that process has ended; false: it runs; null: cannot tell (another machine): a lease decides */
  gone(id: string): boolean | null;
}
