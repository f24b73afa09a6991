// The part of OpenClaw's plugin SDK this plugin uses (openclaw@2026.9.6, plugin-sdk/plugin-entry).
// The gateway provides the module at run time (it resolves `openclaw/plugin-sdk/*` to its own copy),
// so the project does not depend on the 770 MB openclaw package just for its types.
declare module "openclaw/plugin-sdk/plugin-entry" {
  export interface PluginLogger {
    debug?(message: string): void;
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
  }

  /** What a service's start/stop receive: `config` is the whole gateway config. */
  export interface OpenClawPluginServiceContext {
    config: Record<string, unknown>;
    stateDir: string;
    logger: PluginLogger;
    serviceHealth?: { reportFailure(error: unknown): void; clearFailure(): void };
  }

  export interface OpenClawPluginService {
    id: string;
    start(ctx: OpenClawPluginServiceContext): void | Promise<void>;
    stop?(ctx: OpenClawPluginServiceContext): void | Promise<void>;
  }

  export interface OpenClawPluginApi {
    /** plugins.entries.<id>.config, validated against openclaw.plugin.json's configSchema. */
    pluginConfig?: Record<string, unknown>;
    logger: PluginLogger;
    registerService(service: OpenClawPluginService): void;
    runtime?: { config?: { current?(): Record<string, unknown> } };
  }

  export interface OpenClawPluginDefinition {
    id: string;
    name?: string;
    description?: string;
    register(api: OpenClawPluginApi): void;
  }

  export function definePluginEntry(definition: OpenClawPluginDefinition): OpenClawPluginDefinition;
}
