/*
 * Code that crashes, for the core-dump tests: a sensor task whose innermost call reads through a
 * null pointer. Compiled without optimisation and with frame pointers, so that each function's
 * frame is the plain prologue libs/testkit/src/esp-core-dumps.ts lays a crashed stack out from;
 * gdb then unwinds that stack from the DWARF call-frame information as it would a device's.
 *
 * TCB_t stands in for FreeRTOS's task control block: gdb reads the crashed task's name from
 * ((TCB_t *)tcb)->pcTaskName, as Espressif's esp-coredump does.
 */
#include <stdint.h>

typedef struct {
  volatile uint32_t *pxTopOfStack;
  uint32_t xStateListItem[5];
  uint32_t xEventListItem[5];
  uint32_t uxPriority;
  uint32_t *pxStack;
  char pcTaskName[16]; /* at byte 52 */
} TCB_t;

TCB_t crashed_task_tcb;
volatile int *volatile sensor_register;

__attribute__((noinline)) int read_sensor(int channel) { return sensor_register[channel]; }

__attribute__((noinline)) int average_reading(int channels) {
  int sum = 0;
  for (int channel = 0; channel < channels; channel++) sum += read_sensor(channel);
  return sum / channels;
}

__attribute__((noinline)) void sensor_task(void *channels) {
  while (average_reading((int)(intptr_t)channels) < 100) {
  }
}

/* Another way down to the same fault, for a second crash signature. */
__attribute__((noinline)) int calibrate(int channel) { return read_sensor(channel) * 2; }

__attribute__((noinline)) void calibration_task(void *channel) { calibrate((int)(intptr_t)channel); }
