// Types of eslint/layers.js (plain JavaScript: eslint.config.js loads it without a compiler).
export interface Layer {
  readonly imports: readonly string[];
  readonly pure: boolean;
  readonly packages: readonly string[];
  readonly why: string;
}
export declare const LAYERS: Readonly<Record<string, Layer>>;
export declare const REPO_ROOT: string;
export declare function allowedRooms(room: string): string[] | undefined;
export declare function roomOf(relativePath: string): string;
export declare function importedRoom(file: string, specifier: string): string | undefined;
export declare const layersRule: unknown;
