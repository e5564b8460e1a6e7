use super::*;
use cairn_tools::approval::ApprovalPolicy;

fn settings(text: &str) -> McpSettings {
    #[derive(serde::Deserialize)]
    struct File {
        mcp: McpSettings,
    }
    toml::from_str::<File>(text).unwrap().mcp
}

#[test]
fn server_tools_ask_unless_their_settings_or_the_policy_say_otherwise() {
    let hub = McpHub::new(
        &settings(
            r#"
[mcp.servers.files]
command = "x"
tools = { read = "allow" }
[mcp.servers.web]
command = "y"
approval = "allow"
tools = { post = "deny" }
"#,
        ),
        HubOptions::default(),
    );
    let mut policy = ApprovalPolicy {
        mcp: hub.policies(),
        ..ApprovalPolicy::default()
    };
    // The default policy allows (file tools run freely); server tools still ask.
    assert_eq!(policy.for_tool("files__write"), Policy::Ask);
    assert_eq!(policy.for_tool("files__read"), Policy::Allow);
    assert_eq!(policy.for_tool("web__get"), Policy::Allow);
    assert_eq!(policy.for_tool("web__post"), Policy::Deny);
    // A tool named in [approval.tools] is as the user named it there.
    policy.tools.insert("web__post".into(), Policy::Ask);
    assert_eq!(policy.for_tool("web__post"), Policy::Ask);
    // A tool of no configured server is not a server tool.
    assert_eq!(policy.for_tool("other__x"), Policy::Allow);
    // A policy that denies by default denies what the server leaves open.
    policy.default = Policy::Deny;
    assert_eq!(policy.for_tool("files__write"), Policy::Deny);
    // --yes allows everything.
    assert_eq!(
        ApprovalPolicy::allow_all().for_tool("files__write"),
        Policy::Allow
    );
}

#[test]
fn a_server_with_bad_settings_is_listed_as_failed_with_the_reason() {
    let hub = McpHub::new(
        &settings("[mcp.servers.broken]\nurl = \"ftp://x\"\n[mcp.servers.ok]\ncommand = \"x\"\nenabled = false\n"),
        HubOptions::default(),
    );
    let status = hub.status();
    assert_eq!(status.len(), 2);
    assert_eq!(status[0].name, "broken");
    assert_eq!(status[0].state, McpState::Failed);
    assert!(status[0]
        .error
        .as_deref()
        .unwrap()
        .contains("http:// or https://"));
    assert_eq!(status[1].state, McpState::Stopped);
    assert!(!status[1].enabled);
}
