/**
 * Estimates how many tokens a text costs a model, without a tokenizer (the provider may be
 * any OpenAI-compatible model): one token per 3.5 ASCII characters (English prose runs about
 * 4 per token in o200k and cl100k, code and numbers fewer), one per CJK character (common Han
 * characters and kana are one token or less in o200k), and one per two other characters
 * (accented Latin, Cyrillic, emoji halves …). Meant to err towards more tokens.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let cjk = 0;
  let other = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) ascii += 1;
    else if (isCjkUnit(code)) cjk += 1;
    else other += 1;
  }
  return Math.ceil(ascii / 3.5 + cjk + other / 2);
}

/** Han, kana, CJK punctuation, Hangul and full-width forms, by UTF-16 unit (surrogates count as other). */
function isCjkUnit(code: number): boolean {
  return (
    (code >= 0x2e80 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xffef)
  );
}
