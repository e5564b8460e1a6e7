use cairn_protocol::{AssistantMessage, StopReason, ToolResultMessage};
use minijinja::ErrorKind;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::local::template::flat::tests::conversation;

const HERMES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/templates/hermes.jinja"
));
const LLAMA31: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/templates/llama31.jinja"
));
const MISTRAL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/templates/mistral.jinja"
));
/// A ChatML template that knows nothing of tools (as SmolLM2 carries).
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' \
                      + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}\
                      {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

fn template(source: &str) -> JinjaTemplate {
    let special = SpecialTokens {
        bos: "<s>".into(),
        eos: "</s>".into(),
    };
    JinjaTemplate::new(source, special).unwrap()
}

fn read_file() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file in the workspace".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }),
    }
}

#[test]
fn the_call_format_is_taught_only_by_templates_that_render_tools() {
    assert_eq!(template(HERMES).calls(), Some(CallFormat::Hermes));
    assert_eq!(template(LLAMA31).calls(), Some(CallFormat::Llama3));
    assert_eq!(template(MISTRAL).calls(), Some(CallFormat::Mistral));
    assert_eq!(template(CHATML).calls(), None);
    let marker_without_tools = format!("{{# answer with <tool_call> #}}{CHATML}");
    assert_eq!(template(&marker_without_tools).calls(), None);
}

#[test]
fn a_hermes_prompt_holds_the_tools_and_the_earlier_call_and_result() {
    let prompt = template(HERMES)
        .render(
            Some("You are Cairn. "),
            &conversation(),
            &[read_file()],
            None,
        )
        .unwrap();
    let want = concat!(
        "<|im_start|>system\nYou are Cairn.\n\n# Tools\n\nYou may call one or more functions ",
        "to assist with the user query.\n\nYou are provided with function signatures within ",
        "<tools></tools> XML tags:\n<tools>\n",
        r#"{"type": "function", "function": {"name": "read_file", "description": "Read a file "#,
        r#"in the workspace", "parameters": {"properties": {"path": {"type": "string"}}, "#,
        r#""required": ["path"], "type": "object"}}}"#,
        "\n</tools>\n\nFor each function call, return a json object with function name and ",
        "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n",
        "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n",
        "<|im_start|>user\nread a.md<|im_end|>\n",
        "<|im_start|>assistant\nLet me look.\n<tool_call>\n",
        "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call><|im_end|>\n",
        "<|im_start|>user\n<tool_response>\nhello\0\n</tool_response><|im_end|>\n",
        "<|im_start|>assistant\n",
    );
    assert_eq!(prompt, want);
}

#[test]
fn without_tools_a_tool_template_renders_none() {
    let prompt = template(HERMES)
        .render(Some("Be brief."), &[Message::user("Hi")], &[], None)
        .unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n\
         <|im_start|>assistant\n"
    );
}

#[test]
fn a_llama_prompt_holds_the_tools_and_the_earlier_call_and_result() {
    let prompt = template(LLAMA31)
        .render(
            Some("You are Cairn."),
            &conversation(),
            &[read_file()],
            None,
        )
        .unwrap();
    let today = chrono::Local::now().format("%d %b %Y").to_string();
    let tool = concat!(
        "{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"read_file\",\n",
        "        \"description\": \"Read a file in the workspace\",\n",
        "        \"parameters\": {\n            \"properties\": {\n",
        "                \"path\": {\n                    \"type\": \"string\"\n",
        "                }\n            },\n            \"required\": [\n",
        "                \"path\"\n            ],\n            \"type\": \"object\"\n",
        "        }\n    }\n}",
    );
    let want = format!(
        "<s><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n\
         Cutting Knowledge Date: December 2023\nToday Date: {today}\n\nYou are Cairn.<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please \
         respond with a JSON for a function call with its proper arguments that best answers \
         the given prompt.\n\nRespond in the format {{\"name\": function name, \"parameters\": \
         dictionary of argument name and its value}}.Do not use variables.\n\n{tool}\n\n\
         read a.md<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n\
         {{\"name\": \"read_file\", \"parameters\": {{\"path\": \"a.md\"}}}}<|eot_id|>\
         <|start_header_id|>ipython<|end_header_id|>\n\nhello\0<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n"
    );
    assert_eq!(prompt, want);
}

#[test]
fn a_template_refusing_the_conversation_says_why() {
    let mut messages = conversation();
    let Message::Assistant(answer) = &mut messages[1] else {
        panic!("the second message is the assistant's")
    };
    let second = answer.content[1].clone();
    answer.content.push(second);
    let err = template(LLAMA31)
        .render(None, &messages, &[read_file()], None)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    assert!(
        err.to_string()
            .contains("This model only supports single tool-calls at once!"),
        "{err}"
    );
}

#[test]
fn mistral_gets_call_ids_of_nine_characters() {
    let prompt = template(MISTRAL)
        .render(Some("Be brief."), &conversation(), &[read_file()], None)
        .unwrap();
    let id = short_id("c1");
    let tools = concat!(
        r#"[{"type": "function", "function": {"name": "read_file", "description": "Read a "#,
        r#"file in the workspace", "parameters": {"properties": {"path": {"type": "string"}}, "#,
        r#""required": ["path"], "type": "object"}}}]"#,
    );
    let want = format!(
        "<s>[AVAILABLE_TOOLS] {tools}[/AVAILABLE_TOOLS][INST] read a.md[/INST]\
         [TOOL_CALLS] [{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"a.md\"}}, \
         \"id\": \"{id}\"}}]</s>\
         [TOOL_RESULTS] {{\"content\": \"hello\\u0000\", \"call_id\": \"{id}\"}}[/TOOL_RESULTS]"
    );
    assert_eq!(prompt, want);
}

#[test]
fn a_template_without_calls_gets_them_as_text() {
    let prompt = template(CHATML)
        .render(None, &conversation(), &[read_file()], None)
        .unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>user\nread a.md<|im_end|>\n<|im_start|>assistant\nLet me look.\n\
         [called tool `read_file` with {\"path\":\"a.md\"}]<|im_end|>\n\
         <|im_start|>user\n[tool `read_file` returned]\nhello<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn arguments_kept_as_text_are_passed_as_objects_when_they_parse() {
    let messages = vec![
        Message::user("list"),
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolCall(ToolCall {
                id: "c9".into(),
                name: "ls".into(),
                arguments: json!("{\"all\": true}"),
            })],
            stop_reason: StopReason::ToolUse,
            usage: None,
            model: None,
        }),
        Message::ToolResult(ToolResultMessage {
            call_id: "c9".into(),
            tool_name: "ls".into(),
            content: "a.md".into(),
            is_error: false,
            pictures: Vec::new(),
        }),
    ];
    let prompt = template(HERMES)
        .render(None, &messages, &[read_file()], None)
        .unwrap();
    assert!(
        prompt.contains(
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"ls\", \"arguments\": \
             {\"all\": true}}\n</tool_call><|im_end|>"
        ),
        "{prompt}"
    );
}

#[test]
fn a_broken_template_is_an_error_naming_the_place() {
    let special = SpecialTokens::default();
    let err =
        JinjaTemplate::new("{% for m in messages %}{{ m.content }}", special.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SyntaxError);
    assert!(err.to_string().contains("chat_template"), "{err}");

    let refuses = "{{ raise_exception('System role not supported') }}";
    let err = JinjaTemplate::new(refuses, special).unwrap_err();
    assert!(
        err.to_string().contains("System role not supported"),
        "{err}"
    );
}

#[test]
fn python_string_methods_work() {
    let source = "{% for m in messages %}{{ m.content.strip().upper() }}\
                  {% if m.content.startswith(' h') %}!{% endif %}{% endfor %}";
    let prompt = template(source)
        .render(None, &[Message::user(" hi ")], &[], None)
        .unwrap();
    assert_eq!(prompt, "HI!");
}

/// The end of Qwen3's template: `enable_thinking = false` opens the answer with an empty
/// reasoning block, so the model answers at once.
const QWEN3_TAIL: &str =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' \
                          + message['content'] + '<|im_end|>\\n' }}{% endfor %}\
                          {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}\
                          {% if enable_thinking is defined and enable_thinking is false %}\
                          {{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}";

#[test]
fn a_template_with_a_thinking_switch_is_told_off_or_on_and_others_are_left_alone() {
    let qwen = template(QWEN3_TAIL);
    assert!(qwen.thinking_switch());
    let hi = [Message::user("Hi")];
    let render = |t: &JinjaTemplate, thinking| t.render(None, &hi, &[], thinking).unwrap();
    assert!(render(&qwen, Some(false)).ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    assert!(render(&qwen, Some(true)).ends_with("<|im_start|>assistant\n"));
    assert_eq!(render(&qwen, None), render(&qwen, Some(true)));
    let plain = template(CHATML);
    assert!(!plain.thinking_switch());
    assert_eq!(render(&plain, Some(false)), render(&plain, None));
}
