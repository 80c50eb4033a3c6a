// UI strings in English and Chinese. The language also goes with each run
// (`language`), so the prompts switch too.
import { signal } from './state';

export type Lang = 'en' | 'zh';

const en = {
  title: 'wunder console',
  chat: 'Chat',
  monitor: 'Monitor',
  message: 'Message',
  send: 'Send',
  cancel: 'Cancel',
  newChat: 'New chat',
  sessions: 'Sessions',
  noSessions: 'No sessions yet',
  model: 'Model',
  defaultModel: 'default',
  tools: 'Tools',
  searchTools: 'Search tools',
  language: 'Language',
  theme: 'Theme',
  dark: 'Dark',
  light: 'Light',
  logout: 'Log out',
  login: 'Log in',
  userId: 'User id',
  password: 'Password',
  loginTitle: 'Log in to wunder',
  anonTitle: 'Local mode: no login needed',
  anonHint: 'This server has no API key and listens on loopback. Name the user you act as.',
  continue: 'Continue',
  reasoning: 'Reasoning',
  arguments: 'Arguments',
  result: 'Result',
  running: 'running…',
  usage: 'Tokens',
  reconnecting: 'Connection lost, resuming…',
  stopped: 'Stopped',
  you: 'You',
  assistant: 'wunder',
  approvalTitle: 'Approval needed',
  approve: 'Approve',
  reject: 'Reject',
  edit: 'Run with these arguments',
  cancelRun: 'Cancel run',
  reason: 'Reason (the model reads it)',
  invalidJSON: 'The arguments are not a JSON object',
  liveRuns: 'Live runs',
  noRuns: 'No run is in progress',
  toolUsage: 'Tool usage (24 h)',
  noToolUsage: 'No tool was called in the last 24 hours',
  user: 'User',
  session: 'Session',
  state: 'State',
  currentTool: 'Current tool',
  duration: 'Duration',
  question: 'Question',
  tool: 'Tool',
  calls: 'Calls',
  errors: 'Errors',
  users: 'Users',
  refresh: 'Refresh',
  selected: 'selected',
  error: 'Error',
  ms: 'ms',
  navigation: 'Main',
  skip: 'Skip to content',
  emptyChat: 'Ask wunder something. Pick tools on the left to let it act.',
};

const zh: typeof en = {
  title: 'wunder 控制台',
  chat: '对话',
  monitor: '监控',
  message: '消息',
  send: '发送',
  cancel: '取消',
  newChat: '新对话',
  sessions: '会话',
  noSessions: '还没有会话',
  model: '模型',
  defaultModel: '默认',
  tools: '工具',
  searchTools: '搜索工具',
  language: '语言',
  theme: '主题',
  dark: '深色',
  light: '浅色',
  logout: '退出登录',
  login: '登录',
  userId: '用户 ID',
  password: '密码',
  loginTitle: '登录 wunder',
  anonTitle: '本地模式：无需登录',
  anonHint: '此服务器未设置 API 密钥，只监听本机。请填写你要使用的用户 ID。',
  continue: '继续',
  reasoning: '思考过程',
  arguments: '参数',
  result: '结果',
  running: '运行中…',
  usage: 'Token 用量',
  reconnecting: '连接中断，正在恢复…',
  stopped: '已停止',
  you: '你',
  assistant: 'wunder',
  approvalTitle: '需要审批',
  approve: '批准',
  reject: '拒绝',
  edit: '用这些参数执行',
  cancelRun: '取消运行',
  reason: '原因（模型会看到）',
  invalidJSON: '参数不是 JSON 对象',
  liveRuns: '运行中的任务',
  noRuns: '没有正在运行的任务',
  toolUsage: '工具调用（24 小时）',
  noToolUsage: '最近 24 小时没有工具调用',
  user: '用户',
  session: '会话',
  state: '状态',
  currentTool: '当前工具',
  duration: '耗时',
  question: '问题',
  tool: '工具',
  calls: '调用次数',
  errors: '错误',
  users: '用户数',
  refresh: '刷新',
  selected: '已选',
  error: '错误',
  ms: '毫秒',
  navigation: '主导航',
  skip: '跳到内容',
  emptyChat: '向 wunder 提问。在左侧选择工具，让它动手。',
};

export type Strings = typeof en;

function initialLang(): Lang {
  const saved = localStorage.getItem('wunder.lang');
  if (saved === 'en' || saved === 'zh') return saved;
  return navigator.language.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export const lang = signal<Lang>(initialLang());

export function setLang(l: Lang) {
  localStorage.setItem('wunder.lang', l);
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
  lang.set(l);
}

export function strings(l: Lang): Strings {
  return l === 'zh' ? zh : en;
}
