/** A path the model asked for, refused because it could reach outside the agent home. */
export class HomePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HomePathError';
  }
}
