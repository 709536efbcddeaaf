// The standard words of the HTTP statuses people meet, for messages: shared by the engine and the window (which
// cannot import node:http).
export const HTTP_REASONS: Readonly<Record<string, string>> = {
  '400': 'Bad Request',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'Not Found',
  '405': 'Method Not Allowed',
  '406': 'Not Acceptable',
  '407': 'Proxy Authentication Required',
  '408': 'Request Timeout',
  '410': 'Gone',
  '429': 'Too Many Requests',
  '451': 'Unavailable For Legal Reasons',
  '500': 'Internal Server Error',
  '502': 'Bad Gateway',
  '503': 'Service Unavailable',
  '504': 'Gateway Timeout',
};
