export interface ContentType {
  /** `type/subtype`, lower case; empty when the server sent none. */
  readonly mediaType: string;
  readonly charset: string | undefined;
}

/** Reads a `Content-Type` header: `text/html; charset=ISO-8859-1` → text/html, iso-8859-1. */
export function parseContentType(header: string | undefined): ContentType {
  if (header === undefined) return { mediaType: '', charset: undefined };
  const [mediaType = '', ...parameters] = header.split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const match = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(parameter);
    if (match?.[1] !== undefined) charset = match[1].toLowerCase();
  }
  return { mediaType: mediaType.trim().toLowerCase(), charset };
}
