// The fake backend's MCP servers: a running one with tools and one that failed to start.
import { appError } from "../errors";
import type { McpServerStatus, NewMcpServer } from "../types";

const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

export class FakeMcp {
  private servers: McpServerStatus[] = [
    {
      name: "everything",
      transport: "stdio",
      endpoint: "npx -y @modelcontextprotocol/server-everything",
      enabled: true,
      state: "running",
      restarts: 0,
      tools: [
        { name: "everything__echo", server_name: "echo", description: "Echoes back the input string", approval: "ask" },
        { name: "everything__get-sum", server_name: "get-sum", description: "Returns the sum of two numbers", approval: "ask" },
      ],
    },
    {
      name: "tickets",
      transport: "stdio",
      endpoint: "tickets-mcp --stdio",
      enabled: true,
      state: "failed",
      error: "`tickets-mcp --stdio` could not be started: No such file or directory (os error 2)",
      restarts: 0,
      tools: [],
    },
  ];

  /** The servers; with `start`, enabled stopped ones are started (they have no tools here). */
  list(start = false): McpServerStatus[] {
    if (start) for (const s of this.servers) if (s.enabled && s.state === "stopped") s.state = "running";
    return structuredClone(this.servers);
  }

  add(server: NewMcpServer): McpServerStatus[] {
    const name = server.name.trim();
    if (!NAME.test(name) || name.length > 32 || name.endsWith("_")) {
      throw appError("invalid", "a server name has only letters, digits, `-` and `_`, without `__`");
    }
    if (this.servers.some((s) => s.name === name)) throw appError("invalid", `there is already a server named \`${name}\``);
    const command = server.command.trim();
    const url = server.url.trim();
    if (!command === !url) throw appError("invalid", "give a command (a server on stdio) or a URL (an HTTP server), not both");
    this.servers.push({ name, transport: command ? "stdio" : "http", endpoint: command || url, enabled: true, state: "stopped", restarts: 0, tools: [] });
    this.servers.sort((a, b) => a.name.localeCompare(b.name));
    return this.list();
  }

  setEnabled(name: string, enabled: boolean): McpServerStatus[] {
    const server = this.find(name);
    server.enabled = enabled;
    if (!enabled) Object.assign(server, { state: "stopped", tools: [], error: undefined });
    return this.list();
  }

  remove(name: string): McpServerStatus[] {
    this.find(name);
    this.servers = this.servers.filter((s) => s.name !== name);
    return this.list();
  }

  private find(name: string): McpServerStatus {
    const server = this.servers.find((s) => s.name === name);
    if (!server) throw appError("invalid", `no server named \`${name}\``);
    return server;
  }
}
