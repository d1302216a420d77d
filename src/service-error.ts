/** One problem with a request, located by its path in the body. */
export interface RequestIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * A fault the service reports to its caller with a status and a stable code (the HTTP layer
 * renders it as the error envelope). Bugs are not ServiceErrors: they become opaque 5xx.
 */
export class ServiceError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly issues: readonly RequestIssue[] | undefined;

  constructor(options: { statusCode: number; code: string; message: string; issues?: readonly RequestIssue[] }) {
    super(options.message);
    this.name = 'ServiceError';
    this.statusCode = options.statusCode;
    this.code = options.code;
    this.issues = options.issues;
  }
}

export const turnNotFound = (turnId: string) =>
  new ServiceError({ statusCode: 404, code: 'turn_not_found', message: `no turn with id "${turnId.slice(0, 200)}"` });

export const invalidRequest = (issues: readonly RequestIssue[]) =>
  new ServiceError({
    statusCode: 400,
    code: 'invalid_request',
    message: issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; '),
    issues,
  });
