import type { WorkerAgentTool } from '../define-worker-tool.js';
import type { FileToolOptions } from './file-tool-options.js';
import { createEditFileTool, type EditFileParams } from './edit-file.js';
import { createListFilesTool, type ListFilesParams } from './list-files.js';
import { createReadFileTool, type ReadFileParams } from './read-file.js';
import { createWriteFileTool, type WriteFileParams } from './write-file.js';

/** The file tools over one agent home, in the order the model sees them. */
export function createFileTools(options: FileToolOptions): [
  WorkerAgentTool<ReadFileParams>,
  WorkerAgentTool<WriteFileParams>,
  WorkerAgentTool<EditFileParams>,
  WorkerAgentTool<ListFilesParams>,
] {
  return [createReadFileTool(options), createWriteFileTool(options), createEditFileTool(options), createListFilesTool(options)];
}
