from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
FAILURE_POLICY_FAIL_CLOSED: FailurePolicy
FAILURE_POLICY_FAIL_OPEN: FailurePolicy
FAILURE_POLICY_UNSPECIFIED: FailurePolicy
HOOK_LIFECYCLE_PERSISTENT: HookLifecycle
HOOK_LIFECYCLE_PER_EVENT: HookLifecycle
HOOK_LIFECYCLE_UNSPECIFIED: HookLifecycle
SUBSCRIPTION_MODE_INTERCEPT: SubscriptionMode
SUBSCRIPTION_MODE_OBSERVE: SubscriptionMode
SUBSCRIPTION_MODE_UNSPECIFIED: SubscriptionMode

class HookAuthentication(_message.Message):
    __slots__ = ["token_env", "type"]
    TOKEN_ENV_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    token_env: str
    type: str
    def __init__(self, type: _Optional[str] = ..., token_env: _Optional[str] = ...) -> None: ...

class HookBackend(_message.Message):
    __slots__ = ["authentication", "http", "id", "stdio", "subscriptions"]
    AUTHENTICATION_FIELD_NUMBER: _ClassVar[int]
    HTTP_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STDIO_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    authentication: HookAuthentication
    http: HookHttpTransport
    id: str
    stdio: HookStdioTransport
    subscriptions: _containers.RepeatedCompositeFieldContainer[HookSubscription]
    def __init__(self, id: _Optional[str] = ..., stdio: _Optional[_Union[HookStdioTransport, _Mapping]] = ..., http: _Optional[_Union[HookHttpTransport, _Mapping]] = ..., authentication: _Optional[_Union[HookAuthentication, _Mapping]] = ..., subscriptions: _Optional[_Iterable[_Union[HookSubscription, _Mapping]]] = ...) -> None: ...

class HookHttpTransport(_message.Message):
    __slots__ = ["url"]
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class HookStdioTransport(_message.Message):
    __slots__ = ["args", "command", "cwd", "lifecycle"]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    args: _containers.RepeatedScalarFieldContainer[str]
    command: str
    cwd: str
    lifecycle: HookLifecycle
    def __init__(self, command: _Optional[str] = ..., args: _Optional[_Iterable[str]] = ..., lifecycle: _Optional[_Union[HookLifecycle, str]] = ..., cwd: _Optional[str] = ...) -> None: ...

class HookSubscription(_message.Message):
    __slots__ = ["content", "events", "failure_policy", "filters", "include_native", "mode", "timeout_ms", "upload"]
    class ContentEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_NATIVE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_FIELD_NUMBER: _ClassVar[int]
    content: _containers.ScalarMap[str, str]
    events: _containers.RepeatedScalarFieldContainer[str]
    failure_policy: FailurePolicy
    filters: _struct_pb2.Struct
    include_native: bool
    mode: SubscriptionMode
    timeout_ms: int
    upload: _struct_pb2.Struct
    def __init__(self, events: _Optional[_Iterable[str]] = ..., mode: _Optional[_Union[SubscriptionMode, str]] = ..., timeout_ms: _Optional[int] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ..., include_native: bool = ..., content: _Optional[_Mapping[str, str]] = ..., filters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., upload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HooksEffect(_message.Message):
    __slots__ = ["code", "extensions", "reason", "type", "unknown_fields"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    code: str
    extensions: _struct_pb2.Struct
    reason: str
    type: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, type: _Optional[str] = ..., reason: _Optional[str] = ..., code: _Optional[str] = ..., extensions: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HooksInterceptResult(_message.Message):
    __slots__ = ["effects", "extensions", "protocol_version", "unknown_fields"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    effects: _containers.RepeatedCompositeFieldContainer[HooksEffect]
    extensions: _struct_pb2.Struct
    protocol_version: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, protocol_version: _Optional[str] = ..., effects: _Optional[_Iterable[_Union[HooksEffect, _Mapping]]] = ..., extensions: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HooksRegistration(_message.Message):
    __slots__ = ["hooks", "protocol_version"]
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    hooks: _containers.RepeatedCompositeFieldContainer[HookBackend]
    protocol_version: str
    def __init__(self, protocol_version: _Optional[str] = ..., hooks: _Optional[_Iterable[_Union[HookBackend, _Mapping]]] = ...) -> None: ...

class RpcError(_message.Message):
    __slots__ = ["code", "data", "message"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    data: _struct_pb2.Value
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class HookLifecycle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SubscriptionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class FailurePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
