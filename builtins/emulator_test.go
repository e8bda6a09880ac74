package builtins

import _ "github.com/anestar/anestar/ane/emulator" // the backend the test scripts run on
