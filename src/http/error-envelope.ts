import { z } from 'zod';

/** The body of every non-2xx answer. */
export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      issues: z
        .array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() }))
        .optional()
        .describe('For `invalid_request`: each problem with its path.'),
    }),
  })
  .meta({ id: 'Error' });

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

export function errorEnvelope(code: string, message: string, issues?: ErrorEnvelope['error']['issues']): ErrorEnvelope {
  return { error: { code, message, ...(issues === undefined ? {} : { issues }) } };
}

/** Error responses every route may give, for the OpenAPI document. */
export const commonErrorResponses = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  403: errorEnvelopeSchema,
  429: errorEnvelopeSchema,
  503: errorEnvelopeSchema,
} as const;
